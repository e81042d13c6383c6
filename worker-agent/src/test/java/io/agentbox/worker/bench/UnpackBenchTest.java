package io.agentbox.worker.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The unpack benchmark at a tiny size, as a smoke test (real unpacking, no timing thresholds). */
class UnpackBenchTest {
    @Test
    void unpacksBothCompressions() throws Exception {
        String table = UnpackBench.run(2, 1);
        assertThat(table).contains("gzip").contains("zstd").contains("tar MB/s");
    }
}
