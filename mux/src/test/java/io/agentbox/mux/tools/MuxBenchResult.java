package io.agentbox.mux.tools;

import java.net.URI;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * What one {@link MuxBench} run measured: echo throughput and, if sampled, stream-open + 1-byte
 * echo latency. MB are 10^6 bytes. Throughput counts each payload byte once although it crosses
 * the tunnel twice (out and echoed back), as iperf's bidirectional mode would report one direction.
 *
 * @param target the {@code ws://} URL benchmarked
 * @param throughput the throughput run, or {@code null} if none was run
 * @param latency the latency run, or {@code null} if none was run (0 samples)
 */
public record MuxBenchResult(URI target, Throughput throughput, Latency latency) {

    /**
     * N concurrent streams each sent {@code bytesPerStream} and read the same number back.
     *
     * @param streams concurrent streams
     * @param bytesPerStream payload each stream sent (and got back)
     * @param bytesEchoed echoed bytes counted over all streams; equals streams x bytesPerStream
     * @param elapsedNanos wall time from the first write to the last stream's echo and EOF
     */
    public record Throughput(int streams, long bytesPerStream, long bytesEchoed, long elapsedNanos) {
        /** Echoed payload per second, in MB (10^6 bytes). */
        public double mbPerSecond() {
            return elapsedNanos <= 0 ? 0 : bytesEchoed / 1e6 / (elapsedNanos / 1e9);
        }

        public String describe() {
            return String.format(Locale.ROOT, "%d stream(s) x %s echoed in %.3f s: %s MB/s",
                    streams, Sizes.format(bytesPerStream), elapsedNanos / 1e9, mbs(mbPerSecond()));
        }
    }

    /**
     * Sequential samples of: open a stream (SYN until ACK), write 1 byte, read its echo.
     * Percentiles are nearest-rank over the samples taken after warm-up.
     */
    public record Latency(int samples, long minNanos, long p50Nanos, long p99Nanos, long maxNanos, long openP50Nanos) {
        public Latency {
            if (samples <= 0) {
                throw new IllegalArgumentException("samples must be positive");
            }
        }

        /** Nearest-rank percentiles of {@code rtt} (total) and {@code open} (SYN-ACK part); sorts both arrays. */
        public static Latency of(long[] rtt, long[] open) {
            Objects.requireNonNull(rtt, "rtt");
            Arrays.sort(rtt);
            Arrays.sort(open);
            return new Latency(rtt.length, rtt[0], percentile(rtt, 50), percentile(rtt, 99), rtt[rtt.length - 1],
                    percentile(open, 50));
        }

        /** Nearest-rank percentile of an ascending array. */
        public static long percentile(long[] sorted, double p) {
            int rank = (int) Math.ceil(p / 100.0 * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }

        public String describe() {
            return String.format(Locale.ROOT, "open+1B echo over %d samples: p50 %s, p99 %s, min %s, max %s (open alone p50 %s)",
                    samples, ms(p50Nanos), ms(p99Nanos), ms(minNanos), ms(maxNanos), ms(openP50Nanos));
        }
    }

    /** Markdown table header matching {@link #tableRow(String)}. */
    public static String tableHeader() {
        return "| run | streams | bytes/stream | MB/s | open+echo p50 | open+echo p99 |\n"
                + "|---|---:|---:|---:|---:|---:|";
    }

    /** One markdown table row; "-" for the part that was not run. */
    public String tableRow(String label) {
        String streams = throughput == null ? "-" : Integer.toString(throughput.streams());
        String bytes = throughput == null ? "-" : Sizes.format(throughput.bytesPerStream());
        String mbs = throughput == null ? "-" : mbs(throughput.mbPerSecond());
        String p50 = latency == null ? "-" : ms(latency.p50Nanos());
        String p99 = latency == null ? "-" : ms(latency.p99Nanos());
        return "| " + label + " | " + streams + " | " + bytes + " | " + mbs + " | " + p50 + " | " + p99 + " |";
    }

    /** "85.3", or "0.0142" for tiny runs, so a small value never prints as 0.0. */
    public static String mbs(double mbPerSecond) {
        return String.format(Locale.ROOT, mbPerSecond >= 10 ? "%.1f" : "%.3g", mbPerSecond);
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }
}
