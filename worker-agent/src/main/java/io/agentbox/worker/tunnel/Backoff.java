package io.agentbox.worker.tunnel;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with full jitter: the n-th delay is uniform in [base, min(max, base * 2^n)],
 * so a fleet of workers reconnecting after a hub restart spreads out instead of arriving at once.
 */
public final class Backoff {
    private final long baseMillis;
    private final long maxMillis;
    private int attempt;

    public Backoff(Duration base, Duration max) {
        if (base.isNegative() || base.isZero() || max.compareTo(base) < 0) {
            throw new IllegalArgumentException("need 0 < base <= max");
        }
        this.baseMillis = base.toMillis();
        this.maxMillis = max.toMillis();
    }

    /** The delay before the next attempt, in milliseconds. */
    public synchronized long nextDelayMillis() {
        long cap = Math.min(maxMillis, baseMillis << Math.min(attempt, 20));
        attempt++;
        return baseMillis + ThreadLocalRandom.current().nextLong(Math.max(1, cap - baseMillis + 1));
    }

    /** Call after a connection succeeded. */
    public synchronized void reset() {
        attempt = 0;
    }
}
