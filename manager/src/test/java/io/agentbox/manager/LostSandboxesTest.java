package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.StoreConfig;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LostSandboxesTest {

    private static SandboxRecord sandbox(String id, String cluster) {
        return new SandboxRecord(id + "-" + cluster, cluster, "base", "t1", Map.of(), 1_000, 10_000_000, false, null);
    }

    @Test
    void sandboxesOfAClusterDownPastTheGraceAreMarkedLostOthersStay(@TempDir Path dir) {
        try (HubStore store = HubStore.open(StoreConfig.h2(dir), dir, Clock.systemUTC())) {
            store.sandboxStore().insert(sandbox("aaaaaaaaaaaa", "a"));
            store.sandboxStore().insert(sandbox("bbbbbbbbbbbb", "b"));
            store.sandboxStore().insert(sandbox("cccccccccccc", "b"));
            LostSandboxes lost = new LostSandboxes(store.sandboxStore(), Duration.ofSeconds(60));

            assertThat(lost.sweep(Set.of("a"), 100_000)).isZero();       // b first seen down
            assertThat(lost.sweep(Set.of("a"), 159_999)).isZero();       // within the grace
            assertThat(lost.sweep(Set.of("a", "b"), 170_000)).isZero();  // b came back: its clock resets
            assertThat(lost.sweep(Set.of("a"), 180_000)).isZero();       // down again from here
            assertThat(lost.sweep(Set.of("a"), 240_000)).isEqualTo(2);
            assertThat(store.sandboxStore().get("bbbbbbbbbbbb-b").orElseThrow().endReason()).isEqualTo("lost");
            assertThat(store.sandboxStore().get("aaaaaaaaaaaa-a").orElseThrow().ended()).isFalse();
            assertThat(lost.sweep(Set.of(), 400_000)).as("a is seen down only now").isZero();
            assertThat(lost.sweep(Set.of(), 460_000)).isEqualTo(1);
        }
    }
}
