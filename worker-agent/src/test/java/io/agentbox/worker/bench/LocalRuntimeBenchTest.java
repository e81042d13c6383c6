package io.agentbox.worker.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The local runtime benchmark at a tiny size, as a smoke test: every phase runs on real sandboxes. No timing thresholds. */
class LocalRuntimeBenchTest {

    @Test
    void everyPhaseRunsOnRealSandboxes() throws Exception {
        LocalRuntimeBench.Result r = LocalRuntimeBench.run(3, 4, 3);
        assertThat(java.util.Arrays.stream(r.start()).min().orElse(0)).isPositive();
        assertThat(r.kill()).hasSize(3);
        assertThat(java.util.Arrays.stream(r.pause()).min().orElse(0)).isPositive();
        assertThat(r.resume()).hasSize(3);
        assertThat(r.idleExec()).hasSize(3);
        assertThat(r.cyclesPerSecond()).isPositive();
        assertThat(r.idlePssKib()).isPositive();
        assertThat(r.table()).contains("3 idle sandboxes alive").contains("PSS of its init").contains("cycles/s").contains("pause (freeze)");
    }
}
