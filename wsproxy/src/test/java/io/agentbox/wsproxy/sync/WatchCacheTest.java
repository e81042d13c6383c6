package io.agentbox.wsproxy.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.v1.Template;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchCacheTest {

    private static Template t(String name, int size) {
        return Template.newBuilder().setName(name).setPoolSize(size).build();
    }

    @Test
    void changesCarryIncreasingVersionsAndTheSnapshotIsSortedByKey() {
        WatchCache<Template> c = new WatchCache<>(Template::getName);
        assertThat(c.snapshot().version()).isZero();
        assertThat(c.upsert(t("py", 1))).isEqualTo(1);
        assertThat(c.upsert(10, t("base", 4))).isEqualTo(10);
        assertThat(c.upsert(t("py", 2))).isEqualTo(11);
        assertThat(c.delete("nope")).isFalse();
        assertThat(c.version()).isEqualTo(11);
        WatchCache.Snapshot<Template> s = c.snapshot();
        assertThat(s.version()).isEqualTo(11);
        assertThat(s.items()).containsExactly(t("base", 4), t("py", 2));
        assertThat(c.delete(12, "py")).isTrue();
        assertThat(c.snapshot().items()).containsExactly(t("base", 4));
    }

    @Test
    void aVersionThatDoesNotIncreaseIsRefused() {
        WatchCache<Template> c = new WatchCache<>(Template::getName, 5, List.of(t("a", 1)), 8);
        assertThatThrownBy(() -> c.upsert(5, t("b", 1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not above the current 5");
        assertThatThrownBy(() -> c.upsert(0, t("b", 1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(c.snapshot().items()).containsExactly(t("a", 1));
    }

    @Test
    void changesSinceReplaysRetainedHistoryAndAsksForASnapshotOtherwise() {
        WatchCache<Template> c = new WatchCache<>(Template::getName, 0, List.of(), 4);
        for (int i = 1; i <= 10; i++) {
            c.upsert(t("t" + i, i));
        }
        // versions 7..10 retained
        assertThat(c.changesSince(10, 100)).isEmpty();
        assertThat(c.changesSince(6, 100)).extracting(WatchCache.Change::version).containsExactly(7L, 8L, 9L, 10L);
        assertThat(c.changesSince(8, 1)).extracting(WatchCache.Change::version).containsExactly(9L);
        assertThat(c.changesSince(5, 100)).as("version 6 was dropped").isNull();
        assertThat(c.changesSince(11, 100)).as("a version this cache never had").isNull();
        c.delete("t10");
        assertThat(c.changesSince(10, 100)).singleElement().satisfies(ch -> {
            assertThat(ch.type()).isEqualTo(WatchCache.Change.Type.DELETE);
            assertThat(ch.item().getName()).isEqualTo("t10");
        });
    }

    @Test
    void resetDropsHistorySoEveryoneBehindGetsASnapshot() {
        WatchCache<Template> c = new WatchCache<>(Template::getName);
        c.upsert(t("a", 1));
        c.upsert(t("b", 1));
        c.reset(100, List.of(t("z", 3)));
        assertThat(c.changesSince(1, 10)).isNull();
        assertThat(c.changesSince(100, 10)).isEmpty();
        assertThat(c.snapshot()).isEqualTo(new WatchCache.Snapshot<>(100, List.of(t("z", 3))));
    }
}
