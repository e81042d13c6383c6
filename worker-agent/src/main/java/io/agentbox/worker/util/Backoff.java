package io.agentbox.worker.util;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff as a value: the wait after the n-th failure in a row (n counts from 1) has
 * the ceiling {@code min(max, base * 2^(n-1))}, and {@link Jitter} spreads it below that ceiling so
 * that many clients failing at once do not retry at once. Immutable and thread-safe; callers count
 * their own failures and start again from 1 after a success.
 *
 * <p>Used by the tunnel's redial, the registry client's retries and the kubernetes runtime's
 * reconcile queue. Zero {@code base} and {@code max} mean "retry at once".
 */
public final class Backoff {
    /** How a wait is spread below its ceiling {@code c}. */
    public enum Jitter {
        /** Uniform in [base, c]: the widest spread that never retries sooner than {@code base}. */
        FULL,
        /** Uniform in [c / 2, c] ("equal jitter"): half fixed, half random, so the growth stays visible. */
        EQUAL,
        /** Exactly {@code c}: no spread, for a single client or a caller that spreads on its own. */
        NONE
    }

    /** Doubling stops here; 2^62 ms is beyond any {@code max} a Duration in millis can hold anyway. */
    private static final int MAX_SHIFT = 62;

    private final long baseMillis;
    private final long maxMillis;
    private final Jitter jitter;

    private Backoff(long baseMillis, long maxMillis, Jitter jitter) {
        this.baseMillis = baseMillis;
        this.maxMillis = maxMillis;
        this.jitter = jitter;
    }

    /**
     * @param base ceiling of the first wait (millisecond precision)
     * @param max largest ceiling
     * @throws IllegalArgumentException unless {@code 0 <= base <= max}
     */
    public static Backoff of(Duration base, Duration max, Jitter jitter) {
        Objects.requireNonNull(jitter, "jitter");
        if (base.isNegative() || max.compareTo(base) < 0) {
            throw new IllegalArgumentException("need 0 <= base <= max, got base " + base + ", max " + max);
        }
        return new Backoff(base.toMillis(), max.toMillis(), jitter);
    }

    /** The ceiling of the wait after {@code failures} failures in a row: {@code min(max, base * 2^(failures-1))}. */
    public Duration ceiling(int failures) {
        return Duration.ofMillis(ceilingMillis(failures));
    }

    /**
     * The wait after {@code failures} failures in a row, spread by this backoff's jitter.
     *
     * @throws IllegalArgumentException when {@code failures < 1}
     */
    public Duration delay(int failures) {
        return delay(failures, ThreadLocalRandom.current());
    }

    /** {@link #delay(int)} with the given source of randomness (tests pin it). */
    public Duration delay(int failures, RandomGenerator random) {
        long c = ceilingMillis(failures);
        long floor = switch (jitter) {
            case FULL -> Math.min(baseMillis, c);
            case EQUAL -> c / 2;
            case NONE -> c;
        };
        return Duration.ofMillis(floor + random.nextLong(c - floor + 1));
    }

    private long ceilingMillis(int failures) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures count from 1, got " + failures);
        }
        int shift = Math.min(failures - 1, MAX_SHIFT);
        // base << shift overflows exactly when it would exceed max >> shift, so compare that way round
        return baseMillis > (maxMillis >> shift) ? maxMillis : Math.min(maxMillis, baseMillis << shift);
    }

    @Override
    public String toString() {
        return "Backoff[" + baseMillis + " ms doubling to " + maxMillis + " ms, " + jitter + " jitter]";
    }
}
