package io.agentbox.worker.metrics;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.worker.runtime.ResourceUsage;
import io.agentbox.worker.runtime.RuntimeSandbox;
import java.util.Collection;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples every claimed sandbox every {@link #PERIOD_MS} ms (E2B's period,
 * docs/e2b-wire.md#metrics) on wall-clock multiples of the period, into each sandbox's
 * {@link MetricRing}; a newly claimed sandbox also gets one sample {@link #FIRST_SAMPLE_MS} ms
 * after its claim, so its first sample is there within seconds. Paused sandboxes are sampled too:
 * frozen, they use no CPU, but they still hold their memory and files, and the samples show it.
 * Sandboxes whose runtime cannot measure ({@link RuntimeSandbox#usage()} null) get no samples.
 */
public final class MetricsSampler implements AutoCloseable {
    public static final long PERIOD_MS = 5_000;
    /** Delay of a claimed sandbox's first sample: long enough for a CPU percentage to mean something. */
    public static final long FIRST_SAMPLE_MS = 1_000;

    private static final Logger log = LoggerFactory.getLogger(MetricsSampler.class);

    /** A sandbox as the sampler sees it. */
    public interface Target {
        RuntimeSandbox runtime();

        MetricRing metrics();
    }

    private final Supplier<Collection<? extends Target>> targets;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("sandbox-metrics"));

    /** @param targets the sandboxes to sample, asked at every tick */
    public MetricsSampler(Supplier<Collection<? extends Target>> targets) {
        this.targets = targets;
        long now = System.currentTimeMillis();
        timer.scheduleAtFixedRate(this::tick, PERIOD_MS - now % PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    /** Takes the CPU baseline of a just-claimed sandbox and schedules its first sample. */
    public void claimed(Target t) {
        try {
            // one hand-off on the claim path; the sampler's thread schedules the first sample itself
            timer.execute(() -> {
                ResourceUsage u = usage(t);
                if (u != null) {
                    t.metrics().baseline(u.cpuNanos(), System.nanoTime());
                    timer.schedule(() -> sample(t), FIRST_SAMPLE_MS, TimeUnit.MILLISECONDS);
                }
            });
        } catch (RejectedExecutionException closed) {
            // shutting down
        }
    }

    private void tick() {
        try {
            for (Target t : targets.get()) {
                sample(t);
            }
        } catch (RuntimeException e) {
            log.warn("sampling sandbox metrics failed", e);
        }
    }

    private static void sample(Target t) {
        ResourceUsage u = usage(t);
        if (u != null) {
            t.metrics().add(u, System.currentTimeMillis(), System.nanoTime());
        }
    }

    private static ResourceUsage usage(Target t) {
        try {
            return t.runtime().usage();
        } catch (RuntimeException e) {
            return null; // ended meanwhile
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
