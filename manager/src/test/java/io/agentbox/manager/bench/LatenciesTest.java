package io.agentbox.manager.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LatenciesTest {
    @Test
    void nearestRankPercentilesInMilliseconds() {
        Latencies l = new Latencies(100);
        for (int i = 100; i >= 1; i--) {
            l.add(i * 1_000_000L);
        }
        l.add(5_000_000_000L); // over capacity: dropped, not counted
        Latencies.Summary s = l.summary();
        assertThat(s.samples()).isEqualTo(100);
        assertThat(s.p50()).isEqualTo(50_000_000L);
        assertThat(s.p90()).isEqualTo(90_000_000L);
        assertThat(s.p99()).isEqualTo(99_000_000L);
        assertThat(s.max()).isEqualTo(100_000_000L);
        assertThat(s.ms()).isEqualTo("50.0 / 90.0 / 99.0 / 100");
        assertThat(new Latencies(1).summary().samples()).isZero();
    }
}
