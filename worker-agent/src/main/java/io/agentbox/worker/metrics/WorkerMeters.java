package io.agentbox.worker.metrics;

import io.agentbox.protocol.v1.Template;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The worker's operational meters (Micrometer; docs/metrics.md#worker-metrics). Names are
 * Micrometer's dotted form; a Prometheus registry exposes them as {@code agentbox_pool_idle_sandboxes},
 * {@code agentbox_claim_seconds}, {@code agentbox_exec_total} and so on. The registry is the
 * caller's (the process that serves {@code /metrics} makes a Prometheus one); {@link #none()}
 * records nothing.
 *
 * <p>Labels stay bounded: {@code template} is the template's name, except that every template of a
 * snapshot counts as {@value #SNAPSHOT_LABEL} (snapshots are made by users, thousands of them);
 * {@code result} is {@code ok} or a gRPC status code in lower case; {@code source} is
 * {@code registry} or {@code hub}. Thread-safe.
 */
public final class WorkerMeters {
    /** Gauge: idle (warm, unclaimed) sandboxes of a pool, by {@code template}. */
    public static final String POOL_IDLE = "agentbox.pool.idle.sandboxes";
    /** Gauge: claimed sandboxes (running or paused) of a pool, by {@code template}. */
    public static final String POOL_RUNNING = "agentbox.pool.running.sandboxes";
    /** Gauge: paused sandboxes (of the claimed ones) of a pool, by {@code template}. */
    public static final String POOL_PAUSED = "agentbox.pool.paused.sandboxes";
    /** Gauge: the pool size the template asks for, by {@code template}. */
    public static final String POOL_TARGET = "agentbox.pool.target.sandboxes";
    /** Timer: a claim on this worker, from the request to the sandbox handed out, by {@code template} and {@code result}. */
    public static final String CLAIM = "agentbox.claim";
    /** Timer: one sandbox start by a warm pool (background refill or a claim that found the pool empty), by {@code template}. */
    public static final String START = "agentbox.sandbox.start";
    /** Counter: processes started in sandboxes (commands, PTYs), by {@code template}. */
    public static final String EXEC = "agentbox.exec";
    /** Counter: processes of sandboxes the kernel's OOM killer ended at the sandbox's memory limit, by {@code template}. */
    public static final String OOM_KILLS = "agentbox.sandbox.oom.kills";
    /** Counter: bytes of image blobs downloaded, by {@code source}. */
    public static final String PULL_BYTES = "agentbox.image.pull.bytes";
    /** Counter: image pulls finished, by {@code source} and {@code result} ({@code ok}, {@code error}). */
    public static final String PULLS = "agentbox.image.pulls";

    /** The {@code template} label of every snapshot's template. */
    public static final String SNAPSHOT_LABEL = "snapshot";

    /**
     * Histogram buckets of the latency timers: claims take about a millisecond, sandbox starts
     * tens to hundreds, so the buckets span 250 µs to 30 s.
     */
    public static final Duration[] LATENCY_BUCKETS = {
        Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
        Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

    private final MeterRegistry registry;
    private final Set<String> pools = ConcurrentHashMap.newKeySet();
    // built once: per event only the tags are looked up (this runs on the claim and exec paths)
    private final Meter.MeterProvider<Timer> claims;
    private final Meter.MeterProvider<Timer> starts;
    private final Meter.MeterProvider<Counter> execs;
    private final Meter.MeterProvider<Counter> oomKills;
    private final Meter.MeterProvider<Counter> pullBytes;

    public WorkerMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.claims = Timer.builder(CLAIM).description("claims on this worker, from request to sandbox")
                .serviceLevelObjectives(LATENCY_BUCKETS).withRegistry(registry);
        this.starts = Timer.builder(START).description("sandbox starts by warm pools")
                .serviceLevelObjectives(LATENCY_BUCKETS).withRegistry(registry);
        this.execs = Counter.builder(EXEC).description("processes started in sandboxes").withRegistry(registry);
        this.oomKills = Counter.builder(OOM_KILLS).description("sandbox processes killed at the sandbox's memory limit")
                .withRegistry(registry);
        this.pullBytes = Counter.builder(PULL_BYTES).description("image blob bytes downloaded").baseUnit("bytes")
                .withRegistry(registry);
    }

    /** Meters that go nowhere (a composite registry without members). */
    public static WorkerMeters none() {
        return new WorkerMeters(new CompositeMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** The {@code template} label of {@code t}: its name, or {@value #SNAPSHOT_LABEL} for a snapshot's template. */
    public static String templateLabel(Template t) {
        return t.getSnapshot().isEmpty() ? t.getName() : SNAPSHOT_LABEL;
    }

    /** Counts of one pool label for its gauges; read at every scrape. */
    public interface PoolCounts {
        int idle(String label);

        int running(String label);

        int paused(String label);

        int target(String label);
    }

    /**
     * Registers the gauges of pool label {@code label} (once per label; later calls do nothing)
     * and sets its counters to 0, so that every series exists from the pool's start on.
     */
    public void pool(String label, PoolCounts counts) {
        if (!pools.add(label)) {
            return;
        }
        gauge(POOL_IDLE, "idle (warm, unclaimed) sandboxes", label, () -> counts.idle(label));
        gauge(POOL_RUNNING, "claimed sandboxes, paused ones included", label, () -> counts.running(label));
        gauge(POOL_PAUSED, "paused sandboxes", label, () -> counts.paused(label));
        gauge(POOL_TARGET, "pool size the template asks for", label, () -> counts.target(label));
        exec(label, 0);
        oomKilled(label, 0);
    }

    private void gauge(String name, String help, String label, Supplier<Number> value) {
        Gauge.builder(name, value).description(help).tag("template", label).register(registry);
    }

    /** One claim of {@code label} took {@code nanos}; {@code result} is {@code ok} or the failure's status code. */
    public void claimed(String label, long nanos, String result) {
        claims.withTags("template", label, "result", result).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A warm pool of {@code label} started one sandbox in {@code nanos}. */
    public void started(String label, long nanos) {
        starts.withTags("template", label).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** {@code n} processes started in sandboxes of {@code label}. */
    public void exec(String label, long n) {
        execs.withTags("template", label).increment(n);
    }

    /** The OOM killer ended {@code n} processes in sandboxes of {@code label}. */
    public void oomKilled(String label, long n) {
        oomKills.withTags("template", label).increment(n);
    }

    /** {@code n} bytes of image blobs arrived from {@code source}. */
    public void pullBytes(String source, long n) {
        pullBytes.withTags("source", source).increment(n);
    }

    /** Sets the pull counters of every source and result to 0, so that their series exist before the first pull. */
    public void pullSources() {
        for (String source : new String[] {"registry", "hub"}) {
            pullBytes(source, 0);
            for (String result : new String[] {"ok", "error"}) {
                Counter.builder(PULLS).description("image pulls finished").tags("source", source, "result", result)
                        .register(registry);
            }
        }
    }

    /** An image pull from {@code source} ended, with the image stored ({@code ok}) or not. */
    public void pulled(String source, boolean ok) {
        Counter.builder(PULLS).description("image pulls finished").tags("source", source, "result", ok ? "ok" : "error")
                .register(registry).increment();
    }
}
