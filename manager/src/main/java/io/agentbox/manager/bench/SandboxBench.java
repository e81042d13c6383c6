package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The sandbox benchmarks against one E2B endpoint (a hub, or a worker's local API): warm claim
 * latency at given concurrencies, exec latency in an existing sandbox, burst claims per second
 * from a filled pool, and sustained create → run → kill cycles per second. Every sandbox it
 * creates it kills again; kills are not timed.
 */
public final class SandboxBench {
    /** Concurrency of the untimed kills between rounds. */
    static final int KILL_CONCURRENCY = 8;
    static final Duration REFILL_TIMEOUT = Duration.ofMinutes(5);
    /** Pause between rounds when the pool's idle count cannot be read (no management API). */
    static final Duration BLIND_REFILL = Duration.ofSeconds(5);

    private final E2bClient client;
    private final String template;
    /** The template name the pools report (differs from {@link #template} for a snapshot's serving template). */
    private final String pool;
    private final ManagementClient pools;
    private final PrintStream progress;

    /** @param pools null: wait a fixed pause for refills instead (see {@link #refill}) */
    SandboxBench(E2bClient client, String template, ManagementClient pools, PrintStream progress) {
        this(client, template, template, pools, progress);
    }

    /** @param pool the name the worker's pools report for {@code template} (a snapshot's serving template) */
    SandboxBench(E2bClient client, String template, String pool, ManagementClient pools, PrintStream progress) {
        this.client = client;
        this.template = template;
        this.pool = pool;
        this.pools = pools;
        this.progress = progress;
    }

    /**
     * {@code claims} creates at {@code concurrency}, as fast as they answer, each timed from request
     * to 201; then all are killed (untimed). The rate is claims per second of wall time.
     */
    Rate claims(int concurrency, int claims) {
        Latencies lat = new Latencies(claims);
        Queue<String> created = new ConcurrentLinkedQueue<>();
        ClosedLoop.Result r;
        try {
            r = ClosedLoop.run(concurrency, claims, 0, i -> {
                long t0 = System.nanoTime();
                created.add(client.create(template).id());
                lat.add(System.nanoTime() - t0);
            });
        } finally {
            killAll(created);
        }
        return new Rate(r.steps(), r.wallNanos(), lat.summary());
    }

    /** {@code runs} timed {@code commands.run('true')} in one sandbox after {@code warmup} untimed ones. */
    Latencies.Summary exec(int runs, int warmup) {
        E2bClient.Sandbox s = client.create(template);
        try {
            Latencies lat = new Latencies(runs);
            for (int i = 0; i < warmup + runs; i++) {
                long t0 = System.nanoTime();
                int code = client.run(s, "true");
                long took = System.nanoTime() - t0;
                if (code != 0) {
                    throw new BenchException("'true' exited with " + code + " in " + s.id());
                }
                if (i >= warmup) {
                    lat.add(took);
                }
            }
            return lat.summary();
        } finally {
            client.kill(s.id());
        }
    }

    /**
     * Create → {@code commands.run('true')} → kill, in {@code concurrency} loops for {@code duration};
     * the latencies are whole cycles. Once the pool is empty, creates wait for sandbox starts.
     */
    Rate cycles(int concurrency, Duration duration) {
        Latencies lat = new Latencies(1_000_000);
        long deadline = System.nanoTime() + duration.toNanos();
        ClosedLoop.Result r = ClosedLoop.run(concurrency, Integer.MAX_VALUE, deadline, i -> {
            long t0 = System.nanoTime();
            E2bClient.Sandbox s = client.create(template);
            try {
                int code = client.run(s, "true");
                if (code != 0) {
                    throw new BenchException("'true' exited with " + code + " in " + s.id());
                }
            } finally {
                client.kill(s.id());
            }
            lat.add(System.nanoTime() - t0);
        });
        return new Rate(r.steps(), r.wallNanos(), lat.summary());
    }

    /**
     * Waits until {@code idle} sandboxes are idle again and nothing else is starting or being
     * removed (from the management API, {@link ManagementClient#await}), or sleeps
     * {@link #BLIND_REFILL} without one.
     *
     * @return seconds since {@code sinceNanos} (a {@link System#nanoTime()}); with the management
     *     API that is up to 2 s late, as capacity reports come every 2 s
     */
    double refill(int idle, long sinceNanos) {
        if (pools != null) {
            pools.await(pool, idle, REFILL_TIMEOUT, progress);
        } else {
            BenchException.pause(BLIND_REFILL);
        }
        return (System.nanoTime() - sinceNanos) / 1e9;
    }

    /** As {@link #refill(int, long)}, without the time. */
    void refill(int idle) {
        refill(idle, System.nanoTime());
    }

    boolean canWatchPools() {
        return pools != null;
    }

    private void killAll(Queue<String> ids) {
        List<String> all = List.copyOf(ids);
        ClosedLoop.run(Math.min(KILL_CONCURRENCY, Math.max(1, all.size())), all.size(), 0,
                i -> client.kill(all.get(i)));
    }

    /** {@code steps} done in {@code wallNanos}, with their latencies. */
    record Rate(int steps, long wallNanos, Latencies.Summary latency) {
        double perSecond() {
            return steps / (wallNanos / 1e9);
        }

        String perSecondText() {
            return String.format(Locale.ROOT, "%.0f/s (%d in %.2f s)", perSecond(), steps, wallNanos / 1e9);
        }
    }
}
