package io.agentbox.manager.quota;

/**
 * A token bucket: refills continuously at {@code ratePerSecond}, holds at most
 * {@code max(1, ratePerSecond)} tokens (one second's worth), starts full. Not thread-safe: the
 * caller serializes (one bucket per team, used under that team's lock). A bucket of its own rather
 * than a library's because the caller's clock drives it, so tests need not sleep.
 */
final class TokenBucket {
    private static final double NANOS_PER_SECOND = 1e9;

    private double ratePerSecond;
    private double capacity;
    private double tokens;
    private long lastNanos;

    TokenBucket(double ratePerSecond, long nowNanos) {
        setRate(ratePerSecond);
        this.tokens = capacity;
        this.lastNanos = nowNanos;
    }

    double rate() {
        return ratePerSecond;
    }

    /** Changes the rate, keeping the tokens held (capped at the new capacity). */
    void setRate(double newRate) {
        this.ratePerSecond = newRate;
        this.capacity = Math.max(1, newRate);
        this.tokens = Math.min(tokens, capacity);
    }

    /** Takes one token if there is one. */
    boolean tryTake(long nowNanos) {
        refill(nowNanos);
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** Milliseconds until a token is available (0 when one is). */
    long millisUntilNext(long nowNanos) {
        refill(nowNanos);
        return tokens >= 1 ? 0 : (long) Math.ceil((1 - tokens) / ratePerSecond * 1000);
    }

    private void refill(long nowNanos) {
        long elapsed = nowNanos - lastNanos;
        if (elapsed > 0) {
            tokens = Math.min(capacity, tokens + elapsed / NANOS_PER_SECOND * ratePerSecond);
            lastNanos = nowNanos;
        }
    }
}
