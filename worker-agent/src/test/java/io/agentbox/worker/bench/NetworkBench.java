package io.agentbox.worker.bench;

import io.agentbox.worker.runtime.net.BridgeConfig;
import io.agentbox.worker.runtime.net.BridgeNetwork;
import io.agentbox.worker.runtime.net.SandboxNetwork.Attachment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Cost of the isolated network on this host (no JUnit; run with {@code deploy/bin/bench-net}, as
 * root): setup and close of a {@link BridgeNetwork} on bridge {@code abxb0}, and wall time of
 * attach and of detach over many rounds on one stand-in sandbox ({@code unshare --net sleep
 * infinity}), optionally with other sandboxes attached meanwhile.
 *
 * <p>Options: {@code --rounds 200}, {@code --background 0} (sandboxes kept attached during the rounds).
 */
public final class NetworkBench {

    public static void main(String[] args) throws Exception {
        int rounds = 200;
        int background = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--background" -> background = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + " (--rounds N --background N)");
                    System.exit(2);
                }
            }
        }
        System.out.println(run(rounds, background).table());
        System.exit(0);
    }

    /** Wall times in ns. */
    public record Result(int rounds, int background, long setup, long close, long[] attach, long[] detach) {
        public String table() {
            return String.format(Locale.ROOT, """
                    isolated network (bridge + veth + nftables), %d rounds, %d other sandboxes attached
                    setup (cleanup, bridge, rules)  %8.2f ms
                    attach   p50 %6.2f ms   p90 %6.2f ms   max %6.2f ms
                    detach   p50 %6.2f ms   p90 %6.2f ms   max %6.2f ms
                    close                           %8.2f ms""",
                    rounds, background, setup / 1e6,
                    pct(attach, 50), pct(attach, 90), pct(attach, 100),
                    pct(detach, 50), pct(detach, 90), pct(detach, 100), close / 1e6);
        }

        private static double pct(long[] ns, int p) {
            long[] sorted = ns.clone();
            Arrays.sort(sorted);
            int i = Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1);
            return sorted[Math.max(0, i)] / 1e6;
        }
    }

    public static Result run(int rounds, int background) throws Exception {
        List<Process> sandboxes = new ArrayList<>();
        long t0 = System.nanoTime();
        BridgeNetwork net = new BridgeNetwork(BridgeConfig.defaults().withBridge("abxb0"));
        long setup = System.nanoTime() - t0;
        long close;
        long[] attach = new long[rounds];
        long[] detach = new long[rounds];
        try {
            for (int i = 0; i < background; i++) {
                Process p = standIn();
                sandboxes.add(p);
                net.attach("bg-" + i, p.pid());
            }
            Process subject = standIn();
            sandboxes.add(subject);
            for (int i = 0; i < rounds; i++) {
                long a = System.nanoTime();
                Attachment att = net.attach("bench", subject.pid());
                long b = System.nanoTime();
                net.detach(att);
                detach[i] = System.nanoTime() - b;
                attach[i] = b - a;
            }
        } finally {
            long c = System.nanoTime();
            net.close();
            close = System.nanoTime() - c;
            for (Process p : sandboxes) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        return new Result(rounds, background, setup, close, attach, detach);
    }

    /** A process in a new network namespace, returned once it runs sleep (so the namespace is the new one). */
    private static Process standIn() throws Exception {
        Process p = new ProcessBuilder("unshare", "--net", "sleep", "infinity").redirectErrorStream(true).start();
        Path comm = Path.of("/proc", Long.toString(p.pid()), "comm");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.readString(comm).strip().equals("sleep")) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("unshare --net sleep infinity did not start (util-linux installed?)");
            }
            Thread.sleep(1);
        }
        return p;
    }
}
