package io.agentbox.wsproxy.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The propagation benchmark at a tiny size, as a smoke test: every worker gets every create and revoke. No timing thresholds. */
class KeyPropagationBenchTest {

    @Test
    void everyWorkerReceivesEveryCreateAndRevoke() throws Exception {
        KeyPropagationBench.Result r = KeyPropagationBench.run(5, 4, 1);
        assertThat(java.util.Arrays.stream(r.createNanos()).min().orElse(0)).isPositive();
        assertThat(r.createNanos()).hasSize(20);
        assertThat(java.util.Arrays.stream(r.revokeNanos()).min().orElse(0)).isPositive();
        assertThat(r.revokeNanos()).hasSize(20);
        assertThat(r.lastWorkerNanos()).hasSize(4);
        assertThat(r.table()).contains("5 workers x 4 rounds").contains("key revoked at the hub");
        assertThat(KeyPropagationBench.pct(new long[] {5, 1, 3, 2, 4}, 50)).isEqualTo(3);
        assertThat(KeyPropagationBench.pct(new long[] {5, 1, 3, 2, 4}, 100)).isEqualTo(5);
    }
}
