package io.agentbox.worker.metrics;

import com.sun.management.OperatingSystemMXBean;
import io.agentbox.protocol.v1.SandboxMetric;
import io.agentbox.worker.runtime.ResourceUsage;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * One sandbox's newest resource samples, at most {@link #CAPACITY} (an hour at one per
 * {@link MetricsSampler#PERIOD_MS} ms); the oldest is overwritten. Also keeps the previous CPU
 * reading, from which the next sample's CPU percentage is computed. Thread-safe.
 */
public final class MetricRing {
    /** One hour of samples at one every 5 s. */
    public static final int CAPACITY = 720;

    private final int cpuCount;
    private final SandboxMetric[] samples = new SandboxMetric[CAPACITY];
    private int next;
    private int size;
    private long lastCpuNanos = -1;
    private long lastAtNanos;

    /** @param cpuCount CPUs the sandbox may use (its template's, or the host's): the 100 % of cpu_used_pct */
    public MetricRing(int cpuCount) {
        this.cpuCount = Math.max(1, cpuCount);
    }

    /**
     * Takes a CPU reading without a sample: the base the first sample's percentage is computed
     * against (taken at claim, so that the first sample covers only the time since).
     */
    public synchronized void baseline(long cpuNanos, long atNanos) {
        lastCpuNanos = cpuNanos;
        lastAtNanos = atNanos;
    }

    /**
     * Adds a sample of {@code u} taken at wall time {@code atMs} and monotonic time
     * {@code atNanos}. CPU percent = CPU time since the previous reading / (elapsed time ×
     * cpuCount), clamped to 0..100; 0 when there is no previous reading.
     */
    public synchronized SandboxMetric add(ResourceUsage u, long atMs, long atNanos) {
        double pct = 0;
        if (lastCpuNanos >= 0 && atNanos > lastAtNanos) {
            double used = Math.max(0, u.cpuNanos() - lastCpuNanos);
            pct = Math.min(100, used * 100.0 / ((double) (atNanos - lastAtNanos) * cpuCount));
            pct = Math.round(pct * 100) / 100.0;
        }
        lastCpuNanos = u.cpuNanos();
        lastAtNanos = atNanos;
        long total = u.memLimit() > 0 ? u.memLimit() : HostMemory.BYTES;
        SandboxMetric m = SandboxMetric.newBuilder()
                .setTimestampMs(atMs)
                .setCpuCount(cpuCount)
                .setCpuUsedPct(pct)
                .setMemUsed(Math.min(u.memUsed(), total))
                .setMemTotal(total)
                .setMemCache(u.memCache())
                .setDiskUsed(Math.min(u.diskUsed(), u.diskTotal()))
                .setDiskTotal(u.diskTotal())
                .build();
        samples[next] = m;
        next = (next + 1) % CAPACITY;
        size = Math.min(CAPACITY, size + 1);
        return m;
    }

    /** Samples with {@code startMs ≤ timestamp ≤ endMs}, oldest first; a bound of 0 is open. */
    public synchronized List<SandboxMetric> range(long startMs, long endMs) {
        List<SandboxMetric> out = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            SandboxMetric m = samples[(next - size + i + CAPACITY) % CAPACITY];
            if ((startMs == 0 || m.getTimestampMs() >= startMs) && (endMs == 0 || m.getTimestampMs() <= endMs)) {
                out.add(m);
            }
        }
        return out;
    }

    /** The host's memory, the total of a sandbox without a memory limit. */
    static final class HostMemory {
        static final long BYTES = bytes();

        private static long bytes() {
            if (ManagementFactory.getOperatingSystemMXBean()
                    instanceof OperatingSystemMXBean os) {
                return os.getTotalMemorySize();
            }
            return Long.MAX_VALUE;
        }
    }
}
