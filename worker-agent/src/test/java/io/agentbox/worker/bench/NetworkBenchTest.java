package io.agentbox.worker.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The network benchmark at a tiny size, as a smoke test on real namespaces. No timing thresholds. */
class NetworkBenchTest {

    @Test
    void everyRoundAttachesAndDetaches() throws Exception {
        NetworkBench.Result r = NetworkBench.run(3, 2);
        assertThat(r.attach()).hasSize(3).doesNotContain(0L);
        assertThat(r.detach()).hasSize(3).doesNotContain(0L);
        assertThat(r.table()).contains("attach   p50").contains("2 other sandboxes attached");
        assertThat(Path.of("/sys/class/net/abxb0")).doesNotExist();
    }
}
