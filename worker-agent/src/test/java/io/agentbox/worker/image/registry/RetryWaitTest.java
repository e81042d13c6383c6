package io.agentbox.worker.image.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Retry-After parsing (seconds and HTTP dates) and the bounds of the waits. */
class RetryWaitTest {
    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    @Test
    void retryAfterSecondsAndDates() {
        assertEquals(Duration.ofSeconds(7), RetryWait.parseRetryAfter(" 7 ", NOW));
        assertEquals(Duration.ofSeconds(90), RetryWait.parseRetryAfter("Tue, 01 Dec 2026 10:01:30 GMT", NOW));
        assertEquals(Duration.ZERO, RetryWait.parseRetryAfter("Tue, 01 Dec 2026 09:00:00 GMT", NOW));
        assertNull(RetryWait.parseRetryAfter("soon", NOW));
        assertNull(RetryWait.parseRetryAfter("99999999999999999999999", NOW));
        assertNull(RetryWait.parseRetryAfter(null, NOW));
    }

    @Test
    void waitsHonourRetryAfterAndTheCap() {
        Duration cap = Duration.ofSeconds(30);
        for (int i = 0; i < 200; i++) {
            long ra = RetryWait.delay(1, Duration.ofSeconds(2), cap).toMillis();
            assertTrue(ra >= 2000 && ra <= 2200, "Retry-After 2 s gave " + ra);
            long exp = RetryWait.delay(3, null, cap).toMillis();
            assertTrue(exp >= 500 && exp <= 1000, "third attempt gave " + exp);
            long capped = RetryWait.delay(40, null, cap).toMillis();
            assertTrue(capped >= 15_000 && capped <= 30_000, "capped wait " + capped);
        }
    }
}
