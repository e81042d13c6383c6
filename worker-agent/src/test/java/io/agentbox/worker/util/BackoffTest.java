package io.agentbox.worker.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.worker.util.Backoff.Jitter;
import java.time.Duration;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** The ceilings double from base to max, and each jitter keeps its waits inside its own band. */
class BackoffTest {
    private static final Duration BASE = Duration.ofMillis(100);
    private static final Duration MAX = Duration.ofMillis(1000);

    /** Always draws the lowest value, or always the highest: pins the two ends of a band. */
    private static RandomGenerator pinned(boolean highest) {
        return new RandomGenerator() {
            @Override
            public long nextLong() {
                throw new AssertionError("only bounded draws are expected");
            }

            @Override
            public long nextLong(long bound) {
                return highest ? bound - 1 : 0;
            }
        };
    }

    @Test
    void ceilingsDoubleFromBaseAndStopAtMax() {
        Backoff b = Backoff.of(BASE, MAX, Jitter.NONE);
        assertThat(new long[] {b.ceiling(1).toMillis(), b.ceiling(2).toMillis(), b.ceiling(3).toMillis(),
                b.ceiling(4).toMillis(), b.ceiling(5).toMillis(), b.ceiling(6).toMillis()})
                .containsExactly(100, 200, 400, 800, 1000, 1000);
        assertThat(b.delay(3)).isEqualTo(Duration.ofMillis(400));
        assertThat(b.ceiling(Integer.MAX_VALUE)).isEqualTo(MAX);
    }

    @Test
    void hugeBaseAndFailureCountsDoNotOverflow() {
        Duration day = Duration.ofDays(1);
        Backoff b = Backoff.of(day, Duration.ofDays(365), Jitter.NONE);
        assertThat(b.ceiling(64)).isEqualTo(Duration.ofDays(365));
        assertThat(b.ceiling(9)).isEqualTo(Duration.ofDays(256));
    }

    @Test
    void fullJitterSpansBaseToCeiling() {
        Backoff b = Backoff.of(BASE, MAX, Jitter.FULL);
        assertThat(b.delay(1, pinned(false))).isEqualTo(BASE);
        assertThat(b.delay(1, pinned(true))).isEqualTo(BASE);
        assertThat(b.delay(4, pinned(false))).isEqualTo(BASE);
        assertThat(b.delay(4, pinned(true))).isEqualTo(Duration.ofMillis(800));
        for (int i = 0; i < 500; i++) {
            assertThat(b.delay(4).toMillis()).isBetween(100L, 800L);
        }
    }

    @Test
    void equalJitterSpansHalfTheCeilingToTheCeiling() {
        Backoff b = Backoff.of(BASE, MAX, Jitter.EQUAL);
        assertThat(b.delay(3, pinned(false))).isEqualTo(Duration.ofMillis(200));
        assertThat(b.delay(3, pinned(true))).isEqualTo(Duration.ofMillis(400));
        assertThat(b.delay(1, pinned(false))).isEqualTo(Duration.ofMillis(50));
        for (int i = 0; i < 500; i++) {
            assertThat(b.delay(9).toMillis()).isBetween(500L, 1000L);
        }
    }

    @Test
    void zeroMeansRetryAtOnce() {
        assertThat(Backoff.of(Duration.ZERO, Duration.ZERO, Jitter.FULL).delay(7)).isZero();
        assertThat(Backoff.of(Duration.ZERO, Duration.ZERO, Jitter.EQUAL).delay(1)).isZero();
    }

    @Test
    void invalidArgumentsAreRefused() {
        assertThatThrownBy(() -> Backoff.of(MAX, BASE, Jitter.FULL)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("base <= max");
        assertThatThrownBy(() -> Backoff.of(Duration.ofMillis(-1), MAX, Jitter.FULL))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Backoff.of(BASE, MAX, Jitter.FULL).delay(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("from 1");
    }
}
