package io.agentbox.manager.bench;

import io.agentbox.mux.tools.MuxBenchResult;
import java.util.Arrays;
import java.util.Locale;

/**
 * Latency samples in nanoseconds, safe to record from many threads; nearest-rank percentiles.
 *
 * @param capacity most samples kept (later ones are dropped and counted)
 */
final class Latencies {
    private final long[] samples;
    private int count;
    private int dropped;

    Latencies(int capacity) {
        this.samples = new long[capacity];
    }

    synchronized void add(long nanos) {
        if (count < samples.length) {
            samples[count++] = nanos;
        } else {
            dropped++;
        }
    }

    synchronized Summary summary() {
        long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        if (sorted.length == 0) {
            return new Summary(0, 0, 0, 0, 0);
        }
        return new Summary(sorted.length, MuxBenchResult.Latency.percentile(sorted, 50),
                MuxBenchResult.Latency.percentile(sorted, 90), MuxBenchResult.Latency.percentile(sorted, 99),
                sorted[sorted.length - 1]);
    }

    /** Percentiles in nanoseconds over {@code samples} samples. */
    record Summary(int samples, long p50, long p90, long p99, long max) {
        /** e.g. {@code 0.52 / 0.81 / 1.90 / 3.02} (ms). */
        String ms() {
            return String.format(Locale.ROOT, "%s / %s / %s / %s", fmt(p50), fmt(p90), fmt(p99), fmt(max));
        }

        /**
         * This p50 over {@code base}'s, e.g. {@code 1.16 x (10.4 vs 8.98 ms)}, with {@code note} (or
         * null) inside the brackets: {@code 0.53 x (2.95 vs 5.58 ms; image X)}.
         */
        String p50Against(Summary base, String note) {
            return String.format(Locale.ROOT, "%.2f x (%s vs %s ms%s)", (double) p50 / base.p50, fmt(p50), fmt(base.p50),
                    note == null ? "" : "; " + note);
        }

        static String fmt(long nanos) {
            double ms = nanos / 1e6;
            return String.format(Locale.ROOT, ms < 10 ? "%.2f" : ms < 100 ? "%.1f" : "%.0f", ms);
        }
    }
}
