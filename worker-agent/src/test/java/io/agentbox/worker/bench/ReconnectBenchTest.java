package io.agentbox.worker.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The reconnect benchmark at a tiny size, as a smoke test: every worker comes back after each restart. No timing thresholds. */
class ReconnectBenchTest {

    @Test
    void everyWorkerReconnectsAfterEveryHubRestart() throws Exception {
        ReconnectBench.Result r = ReconnectBench.run(4, 2, 300);
        assertThat(r.reconnectNanos()).hasSize(8);
        assertThat(Arrays.stream(r.reconnectNanos()).min().orElse(0)).isPositive();
        assertThat(r.table()).contains("4 workers x 2 rounds");
    }
}
