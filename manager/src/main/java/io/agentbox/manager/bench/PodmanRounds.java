package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The peer in the same run: Debian's {@code podman} CLI against our hub on the same image (one
 * archive, loaded into both), the same network mode and the same OCI runtime (crun), so the
 * ratios are measured, not quoted. Ours is a temporary template of {@link BenchOptions#image()}
 * with a warm pool; podman has no pool: every container is created when asked for. Both sides
 * run {@code /bin/true} directly (no shell) and block one after another (c=1); every block
 * starts after {@link #WARMUP} untimed rounds, and ours waits for the pool to refill before podman
 * runs, so no sandbox start competes with podman for the CPU.
 */
final class PodmanRounds {
    /** Untimed rounds of each kind first: the JIT on our side, podman's store and the page cache on its. */
    static final int WARMUP = 2;
    /** Every podman container's init: {@code sleep}, so one left behind by a killed bench ends on its own. */
    static final String KEEP_SECONDS = "600";
    static final List<String> TRUE = List.of("/bin/true");

    private PodmanRounds() {}

    static void run(BenchOptions o, ManagementClient management, BenchReport report, PrintStream progress) {
        int runs = o.podmanRuns();
        String run = Long.toString(System.nanoTime() % 1_000_000, 36);
        String template = "bench-podman-" + run;
        String network = management.network(o.template());
        int pool = runs + WARMUP + 1; // the kept-container round, and one sandbox for the exec round
        progress.printf("bench: podman peer: loading %s into a podman store of its own; template %s of %s with %d warm "
                + "sandboxes%n", o.podmanArchive(), template, o.image(), pool);
        management.createTemplate(ImageRounds.templateJson(template, pool, o.image(), network));
        // podman's none and host are ours; anything else gets podman's default bridge
        String podmanNetwork = network.equals("none") || network.equals("host") ? network : "bridge";
        try (Podman podman = Podman.open(o.podmanArchive(), podmanNetwork);
             E2bClient hub = new E2bClient(o.apiUrl(), o.sandboxUrl(), o.apiKey())) {
            management.await(template, pool, SandboxBench.REFILL_TIMEOUT, progress);
            String prefix = "agentbox-bench-" + run + "-";
            String where = "podman " + podman.version + " / hub";

            progress.printf("bench: podman peer: %d x create -> /bin/true -> kill (agentbox), then %d x podman run -d, "
                    + "exec /bin/true, rm%n", runs, runs);
            Cycles ours = new Cycles(runs);
            for (int i = 0; i < WARMUP + runs; i++) {
                long t0 = System.nanoTime();
                E2bClient.Sandbox s = hub.create(template);
                ok(hub.start(s, "/bin/true", List.of()), s.id());
                long first = System.nanoTime() - t0;
                hub.kill(s.id());
                ours.add(i, t0, first);
            }
            management.await(template, pool, SandboxBench.REFILL_TIMEOUT, progress);
            Cycles theirs = new Cycles(runs);
            for (int i = 0; i < WARMUP + runs; i++) {
                String name = prefix + "kept-" + i;
                long t0 = System.nanoTime();
                podman.timed(podman.container("run", List.of("--detach", "--name", name), "sleep", KEEP_SECONDS));
                podman.timed(exec(name));
                long first = System.nanoTime() - t0;
                podman.timed(List.of("rm", "--force", "--time", "0", name));
                theirs.add(i, t0, first);
            }
            compare(report, "time to first command in a new container: `podman run -d` + `podman exec CTR /bin/true` "
                    + "vs create + `/bin/true` (E2B API)", where, theirs.first.summary(), ours.first.summary());

            progress.printf("bench: podman peer: %d x podman run --rm IMAGE /bin/true%n", runs);
            Latencies oneShot = new Latencies(runs);
            for (int i = 0; i < WARMUP + runs; i++) {
                long took = podman.timed(podman.container("run", List.of("--rm", "--name", prefix + "once-" + i), "/bin/true"));
                if (i >= WARMUP) {
                    oneShot.add(took);
                }
            }
            compare(report, "one command in a new container, removed after: `podman run --rm IMAGE /bin/true` vs create "
                    + "-> `/bin/true` -> kill", where, oneShot.summary(), ours.cycle.summary());
            report.add("create -> first command -> remove, one after another: `podman run -d`, `exec`, `rm -f -t 0` vs "
                    + "create, `/bin/true`, kill", where, String.format(Locale.ROOT,
                    "podman %.1f/s, agentbox %.1f/s: agentbox / podman = %.1f x (cycle p50 %s vs %s ms)", theirs.perSecond(),
                    ours.perSecond(), ours.perSecond() / theirs.perSecond(), Latencies.Summary.fmt(theirs.cycle.summary().p50()),
                    Latencies.Summary.fmt(ours.cycle.summary().p50())));

            progress.printf("bench: podman peer: %d x /bin/true in a running sandbox, then %d x podman exec%n", runs, runs);
            E2bClient.Sandbox s = hub.create(template);
            Latencies ourExec = new Latencies(runs);
            try {
                management.await(template, pool, SandboxBench.REFILL_TIMEOUT, progress);
                for (int i = 0; i < WARMUP + runs; i++) {
                    long t0 = System.nanoTime();
                    ok(hub.start(s, "/bin/true", List.of()), s.id());
                    if (i >= WARMUP) {
                        ourExec.add(System.nanoTime() - t0);
                    }
                }
            } finally {
                hub.kill(s.id());
            }
            String name = prefix + "exec";
            podman.timed(podman.container("run", List.of("--detach", "--name", name), "sleep", KEEP_SECONDS));
            Latencies theirExec = new Latencies(runs);
            for (int i = 0; i < WARMUP + runs; i++) {
                long took = podman.timed(exec(name));
                if (i >= WARMUP) {
                    theirExec.add(took);
                }
            }
            podman.timed(List.of("rm", "--force", "--time", "0", name));
            compare(report, "command in a running container: `podman exec CTR /bin/true` vs `/bin/true` through envd "
                    + "(E2B API)", where, theirExec.summary(), ourExec.summary());
        } finally {
            management.deleteTemplate(template);
        }
    }

    private static List<String> exec(String container) {
        return List.of("exec", container, "/bin/true");
    }

    private static void ok(int exitCode, String sandboxId) {
        if (exitCode != 0) {
            throw new BenchException("/bin/true exited with " + exitCode + " in " + sandboxId);
        }
    }

    /** Both sides' figures in one row, with podman's percentile over ours. */
    static void compare(BenchReport report, String measure, String where, Latencies.Summary podman, Latencies.Summary ours) {
        report.add(measure, where, String.format(Locale.ROOT,
                "podman p50/p90 %s / %s ms, agentbox %s / %s ms: podman / agentbox = %.1f x at p50, %.1f x at p90 "
                        + "(%d samples each)", Latencies.Summary.fmt(podman.p50()), Latencies.Summary.fmt(podman.p90()),
                Latencies.Summary.fmt(ours.p50()), Latencies.Summary.fmt(ours.p90()), (double) podman.p50() / ours.p50(),
                (double) podman.p90() / ours.p90(), Math.min(podman.samples(), ours.samples())));
    }

    /** Create → first command → remove, timed: to the first command's end, and whole; the rate over the timed ones. */
    private static final class Cycles {
        final Latencies first;
        final Latencies cycle;
        private long startNanos;
        private long endNanos;
        private int counted;

        Cycles(int runs) {
            this.first = new Latencies(runs);
            this.cycle = new Latencies(runs);
        }

        /** @param i round, warm-up ones (below {@link #WARMUP}) are not recorded */
        void add(int i, long t0, long firstNanos) {
            long end = System.nanoTime();
            if (i < WARMUP) {
                return;
            }
            if (counted++ == 0) {
                startNanos = t0;
            }
            endNanos = end;
            first.add(firstNanos);
            cycle.add(end - t0);
        }

        double perSecond() {
            return counted / ((endNanos - startNanos) / 1e9);
        }
    }
}
