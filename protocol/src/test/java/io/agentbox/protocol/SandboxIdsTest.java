package io.agentbox.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SandboxIdsTest {
    @Test
    void idsAreDnsLabelsThatNameTheirCluster() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String id = SandboxIds.newSandboxId("eu-west-1");
            assertThat(id).matches("[a-z0-9-]+").hasSizeLessThanOrEqualTo(57);
            assertThat(("49983-" + id).length()).isLessThanOrEqualTo(63);
            assertThat(SandboxIds.clusterOf(id)).isEqualTo("eu-west-1");
            seen.add(id);
        }
        assertThat(seen).hasSize(1000);
    }

    @Test
    void rejectsMalformedIds() {
        assertThat(SandboxIds.clusterOf("nope")).isNull();
        assertThat(SandboxIds.clusterOf("ABCDEFGHIJKL-x")).isNull();
        assertThat(SandboxIds.clusterOf(null)).isNull();
        assertThatThrownBy(() -> SandboxIds.newSandboxId("Bad_Cluster")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxIds.newSandboxId("x".repeat(45))).isInstanceOf(IllegalArgumentException.class);
        assertThat(SandboxIds.newSandboxId("x".repeat(44))).hasSize(57);
    }
}
