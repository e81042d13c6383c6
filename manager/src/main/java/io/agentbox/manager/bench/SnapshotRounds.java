package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;

/**
 * Snapshot and reset rounds (issue 14 targets; docs/snapshots-and-reset.md), each timed at the
 * client through the hub's E2B API:
 * <ul>
 *   <li>reset: {@code samples} resets of one sandbox with a file and a background process
 *       ({@code POST /v1/sandboxes/{id}/reset} → 200), back to back, then after a
 *       {@link #EPISODE} episode each;</li>
 *   <li>snapshot: {@code samples} snapshots of one sandbox with 50 MB changed (50 files of 1 MiB
 *       from /dev/urandom), each deleted untimed;</li>
 *   <li>claims from a snapshot's warm pool (pool size set on the management API to the main
 *       template's) at the same concurrency levels, with the ratio of their medians to the
 *       template's.</li>
 * </ul>
 */
final class SnapshotRounds {
    static final int CHANGED_MB = 50;
    /** The episode between timed resets of the second reset round. */
    static final Duration EPISODE = Duration.ofMillis(200);

    private SnapshotRounds() {}

    static void run(BenchOptions o, ManagementClient management, int full, Map<Integer, Latencies.Summary> base,
                    BenchReport report, PrintStream progress) {
        E2bClient client = new E2bClient(o.apiUrl(), o.sandboxUrl(), o.apiKey());
        int samples = o.snapshots();
        E2bClient.Sandbox s = client.create(o.template());
        try {
            progress.printf("bench: %d resets of one sandbox back to back, then %d after a %d ms episode each%n", samples,
                    samples, EPISODE.toMillis());
            report.latency("reset (POST /v1/sandboxes/{id}/reset -> 200), back to back", "hub",
                    resets(client, s, samples, Duration.ZERO));
            report.latency("reset (POST /v1/sandboxes/{id}/reset -> 200), after a " + EPISODE.toMillis() + " ms episode", "hub",
                    resets(client, s, samples, EPISODE));

            progress.printf("bench: %d snapshots of a sandbox with %d MB changed%n", samples, CHANGED_MB);
            run(client, s, "mkdir -p /home/user/data && cd /home/user/data && for i in $(seq 1 " + CHANGED_MB
                    + "); do head -c 1048576 /dev/urandom > f$i; done");
            Latencies snaps = new Latencies(samples);
            for (int i = 0; i < samples; i++) {
                long t0 = System.nanoTime();
                String id = client.snapshot(s.id(), null);
                snaps.add(System.nanoTime() - t0);
                client.deleteSnapshot(id);
            }
            report.latency("snapshot of a sandbox with " + CHANGED_MB + " MB changed (-> 201)", "hub", snaps.summary());

            if (management != null && !base.isEmpty()) {
                String snapshotId = client.snapshot(s.id(), "bench-" + Long.toString(System.nanoTime() % 1_000_000, 36));
                try {
                    String pool = management.snapshotPool(snapshotId, full);
                    progress.printf("bench: snapshot %s with %d warm sandboxes%n", snapshotId, full);
                    SandboxBench fromSnapshot = new SandboxBench(client, snapshotId, pool, management, progress);
                    fromSnapshot.refill(full);
                    if (o.warmup() > 0) {
                        fromSnapshot.claims(4, Math.min(o.warmup(), full));
                        fromSnapshot.refill(full);
                    }
                    Map<Integer, Latencies.Summary> snap = BenchRun.claimRounds("hub, snapshot pool", fromSnapshot, o, full,
                            report, progress);
                    for (Map.Entry<Integer, Latencies.Summary> e : snap.entrySet()) {
                        Latencies.Summary b = base.get(e.getKey());
                        report.add("warm claim p50, snapshot pool / " + o.template() + " pool, c=" + e.getKey(), "hub",
                                e.getValue().p50Against(b, null));
                    }
                } finally {
                    client.deleteSnapshot(snapshotId);
                }
            }
        } finally {
            client.kill(s.id());
            client.close();
        }
    }

    /**
     * {@code samples} timed resets, each after a command that dirties the sandbox and {@code episode}
     * of waiting (a reset prepares the next one's standby container in the background, so resets
     * back to back can wait for it; episodes of an RL loop last longer than that).
     */
    private static Latencies.Summary resets(E2bClient client, E2bClient.Sandbox s, int samples, Duration episode) {
        Latencies resets = new Latencies(samples);
        for (int i = 0; i < samples; i++) {
            run(client, s, "echo dirty > /tmp/episode; sleep 3600 >/dev/null 2>&1 &");
            if (!episode.isZero()) {
                BenchException.pause(episode);
            }
            long t0 = System.nanoTime();
            client.reset(s.id());
            resets.add(System.nanoTime() - t0);
        }
        return resets.summary();
    }

    private static void run(E2bClient client, E2bClient.Sandbox s, String command) {
        int code = client.run(s, command);
        if (code != 0) {
            throw new BenchException("'" + command + "' exited with " + code + " in " + s.id());
        }
    }
}
