package io.agentbox.worker.bench;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.local.LocalRuntime;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Host cost of the local runtime's hot paths on a real {@link LocalRuntime} in a temp dir (no
 * JUnit; run with {@code deploy/bin/bench-local}): wall time of start, of launch + wait of
 * {@code true} and of {@code /bin/bash -l -c true} (what the E2B SDK sends), of kill; sustained
 * create -> run -> kill cycles/s on 2 threads with the host CPU they cost (the JVM plus every
 * reaped child process); pause and resume (cgroup freeze and thaw) of a sandbox running a command;
 * and start / exec again with many idle sandboxes alive.
 *
 * <p>Options: {@code --samples 200}, {@code --cycles 400}, {@code --idle 1000}.
 */
public final class LocalRuntimeBench {
    private static final Template BASE = Template.newBuilder().setName("base").setNetwork("host").build();
    private static final LaunchSpec TRUE = new LaunchSpec("true", List.of(), Map.of(), "/home/user", false);
    private static final LaunchSpec BASH_TRUE =
            new LaunchSpec("/bin/bash", List.of("-l", "-c", "true"), Map.of(), "/home/user", false);

    public static void main(String[] args) throws Exception {
        int samples = 200;
        int cycles = 400;
        int idle = 1000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--samples" -> samples = Integer.parseInt(args[++i]);
                case "--cycles" -> cycles = Integer.parseInt(args[++i]);
                case "--idle" -> idle = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + " (--samples N --cycles N --idle N)");
                    System.exit(2);
                }
            }
        }
        System.out.println(run(samples, cycles, idle).table());
        System.exit(0);
    }

    /** Wall times in ns per operation; cycle figures for the 2-thread phase. */
    public record Result(int idle, long[] start, long[] execTrue, long[] execBash, long[] kill,
                         double cyclesPerSecond, double cpuMsPerCycle, long[] idleStart, long[] idleExec,
                         long[] pause, long[] resume, boolean spawner, long idlePssKib, long idleChargeKib) {
        public String table() {
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, """
                    | local runtime (%s, launchMechanism=%s) | p50 | p90 |
                    |---|---:|---:|
                    """, spawner ? "spawner" : "crun exec per command", System.getProperty("jdk.lang.Process.launchMechanism", "default")));
            row(sb, "start", start);
            row(sb, "launch + wait `true`", execTrue);
            row(sb, "launch + wait `/bin/bash -l -c true`", execBash);
            row(sb, "kill", kill);
            row(sb, "pause (freeze), a command running", pause);
            row(sb, "resume (thaw)", resume);
            row(sb, "start, " + idle + " idle sandboxes alive", idleStart);
            row(sb, "launch + wait `true`, " + idle + " idle sandboxes alive", idleExec);
            sb.append(String.format(Locale.ROOT, "| create -> run `true` -> kill, 2 threads | %.0f cycles/s | %.1f ms host CPU per cycle |%n",
                    cyclesPerSecond, cpuMsPerCycle));
            sb.append(String.format(Locale.ROOT, "| idle sandbox, mean of %d: PSS of its init / memory-cgroup charge | %d KiB | %d KiB |%n",
                    idle, idlePssKib, idleChargeKib));
            return sb.toString();
        }

        private static void row(StringBuilder sb, String what, long[] ns) {
            sb.append(String.format(Locale.ROOT, "| %s | %.2f ms | %.2f ms |%n", what, pct(ns, 50) / 1e6, pct(ns, 90) / 1e6));
        }
    }

    public static Result run(int samples, int cycles, int idle) throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-bench-");
        Files.setAttribute(dir, "unix:mode", 0755);
        AtomicInteger ids = new AtomicInteger();
        try (LocalRuntime rt = new LocalRuntime(dir)) {
            for (int i = 0; i < Math.min(20, samples); i++) { // warm-up: JIT, page cache
                RuntimeSandbox s = rt.start("warm-" + i, BASE);
                exec(s, TRUE);
                exec(s, BASH_TRUE);
                s.kill();
            }
            long[] pause = new long[samples];
            long[] resume = new long[samples];
            RuntimeSandbox busy = rt.start("p-" + ids.incrementAndGet(), BASE);
            LaunchedProcess sleeper = busy.launch(new LaunchSpec("/bin/sh", List.of("-c", "sleep 3600 & while :; do sleep 0.01; done"),
                    Map.of(), "/home/user", false));
            for (int i = 0; i < samples; i++) {
                long t0 = System.nanoTime();
                busy.freeze();
                long t1 = System.nanoTime();
                busy.thaw();
                long t2 = System.nanoTime();
                pause[i] = t1 - t0;
                resume[i] = t2 - t1;
            }
            busy.kill();
            sleeper.waitFor();
            // printed now too: a later phase that fails must not lose these
            System.err.printf(Locale.ROOT, "pause p50 %.2f ms p90 %.2f ms; resume p50 %.2f ms p90 %.2f ms (%d samples)%n",
                    pct(pause, 50) / 1e6, pct(pause, 90) / 1e6, pct(resume, 50) / 1e6, pct(resume, 90) / 1e6, samples);

            long[] start = new long[samples];
            long[] execTrue = new long[samples];
            long[] execBash = new long[samples];
            long[] kill = new long[samples];
            for (int i = 0; i < samples; i++) {
                long t0 = System.nanoTime();
                RuntimeSandbox s = rt.start("s-" + ids.incrementAndGet(), BASE);
                long t1 = System.nanoTime();
                exec(s, TRUE);
                long t2 = System.nanoTime();
                exec(s, BASH_TRUE);
                long t3 = System.nanoTime();
                s.kill();
                long t4 = System.nanoTime();
                start[i] = t1 - t0;
                execTrue[i] = t2 - t1;
                execBash[i] = t3 - t2;
                kill[i] = t4 - t3;
            }

            ExecutorService two = Executors.newFixedThreadPool(2);
            long cpu0 = hostCpuNanos();
            long c0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            AtomicInteger left = new AtomicInteger(cycles);
            for (int t = 0; t < 2; t++) {
                done.add(two.submit(() -> {
                    while (left.getAndDecrement() > 0) {
                        RuntimeSandbox s = rt.start("c-" + ids.incrementAndGet(), BASE);
                        exec(s, TRUE);
                        s.kill();
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            double seconds = (System.nanoTime() - c0) / 1e9;
            double cpuMsPerCycle = (hostCpuNanos() - cpu0) / 1e6 / cycles;

            List<Future<RuntimeSandbox>> idlers = new ArrayList<>();
            for (int i = 0; i < idle; i++) {
                idlers.add(two.submit(() -> rt.start("i-" + ids.incrementAndGet(), BASE)));
            }
            List<RuntimeSandbox> alive = new ArrayList<>();
            for (Future<RuntimeSandbox> f : idlers) {
                alive.add(f.get());
            }
            long pss = 0;
            long charge = 0;
            for (RuntimeSandbox s : alive) {
                String pid = Files.readString(rt.sandboxesDir().resolve(s.id()).resolve("pid")).strip();
                pss += Files.readString(Path.of("/proc/" + pid + "/smaps_rollup")).lines().filter(l -> l.startsWith("Pss:"))
                        .mapToLong(l -> Long.parseLong(l.split("\\s+")[1])).sum();
                var usage = s.usage();
                charge += usage == null ? 0 : (usage.memUsed() + usage.memCache()) / 1024;
            }
            long idlePss = alive.isEmpty() ? 0 : pss / alive.size();
            long idleCharge = alive.isEmpty() ? 0 : charge / alive.size();
            int n = Math.max(1, Math.min(samples, 50));
            long[] idleStart = new long[n];
            long[] idleExec = new long[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                RuntimeSandbox s = rt.start("s-" + ids.incrementAndGet(), BASE);
                long t1 = System.nanoTime();
                exec(s, TRUE);
                idleExec[i] = System.nanoTime() - t1;
                idleStart[i] = t1 - t0;
                s.kill();
            }
            List<Future<?>> kills = new ArrayList<>();
            for (RuntimeSandbox s : alive) {
                kills.add(two.submit(s::kill));
            }
            for (Future<?> f : kills) {
                f.get();
            }
            two.shutdown();
            return new Result(idle, start, execTrue, execBash, kill, cycles / seconds, cpuMsPerCycle, idleStart, idleExec,
                    pause, resume, rt.hasSpawner(), idlePss, idleCharge);
        } finally {
            deleteQuietly(dir);
        }
    }

    /** Runs {@code spec} to its end like the process table does: drains both pipes, then waits. */
    static int exec(RuntimeSandbox s, LaunchSpec spec) throws IOException, InterruptedException {
        LaunchedProcess p = s.launch(spec);
        try (var out = p.stdout(); var err = p.stderr()) {
            out.transferTo(java.io.OutputStream.nullOutputStream());
            err.transferTo(java.io.OutputStream.nullOutputStream());
        }
        int code = p.waitFor();
        if (code != 0) {
            throw new IllegalStateException(spec.cmd() + " exited with " + code);
        }
        return code;
    }

    /**
     * CPU of this JVM plus its reaped descendants (nsenter, crun and whatever they
     * waited for: /proc/self/stat cutime + cstime, in clock ticks of 10 ms).
     */
    static long hostCpuNanos() throws IOException {
        long jvm = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(f[13]) + Long.parseLong(f[14]); // fields 16, 17: cutime, cstime
        return jvm + ticks * 10_000_000L;
    }

    static double pct(long[] ns, int p) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s.length == 0 ? 0 : s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }

    private static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp dir; the next run's LocalRuntime would not look here anyway
        }
    }
}
