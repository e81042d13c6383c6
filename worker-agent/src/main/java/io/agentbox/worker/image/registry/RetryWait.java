package io.agentbox.worker.image.registry;

import io.agentbox.worker.util.Backoff;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Waits between retries: what {@code Retry-After} asks for (RFC 9110 section 10.2.3: delay in
 * seconds or an HTTP date) plus a little jitter, else the shared {@link Backoff} from 250 ms with
 * equal jitter; never more than the configured cap.
 */
final class RetryWait {
    static final Duration BASE = Duration.ofMillis(250);
    /** Extra wait added to a registry's Retry-After, at most this fraction of it (and at most 1 s). */
    static final double RETRY_AFTER_JITTER = 0.1;

    private RetryWait() {}

    /**
     * Parses {@code Retry-After}.
     *
     * @return the delay (zero for a date in the past), or null when absent or unreadable
     */
    static Duration parseRetryAfter(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.trim();
        if (v.chars().allMatch(Character::isDigit)) {
            try {
                return Duration.ofSeconds(Long.parseLong(v));
            } catch (NumberFormatException | ArithmeticException e) {
                return null; // absurdly long: treated as unreadable, exponential back-off applies
            }
        }
        try {
            Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            Duration d = Duration.between(now, at);
            return d.isNegative() ? Duration.ZERO : d;
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /**
     * The wait before attempt {@code attempt + 1} (attempt counts from 1).
     *
     * @param retryAfter what the registry asked for, or null
     * @return the wait, never above {@code cap} unless {@code retryAfter} is (callers refuse that case)
     */
    static Duration delay(int attempt, Duration retryAfter, Duration cap) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        if (retryAfter != null) {
            long ms = retryAfter.toMillis();
            long jitter = Math.min(1000, (long) (ms * RETRY_AFTER_JITTER));
            long total = ms + (jitter > 0 ? r.nextLong(jitter + 1) : 0);
            return Duration.ofMillis(Math.max(ms, Math.min(total, cap.toMillis())));
        }
        // "equal jitter": half fixed, half random, so retries of many pulls spread out; a cap below
        // the base lowers the base, so every wait stays within the cap
        Duration base = BASE.compareTo(cap) > 0 ? cap : BASE;
        return Backoff.of(base, cap, Backoff.Jitter.EQUAL).delay(attempt, r);
    }
}
