package io.agentbox.worker.sync;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.Template;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchReplicaTest {

    private static Template t(String name, int size) {
        return Template.newBuilder().setName(name).setPoolSize(size).build();
    }

    @Test
    void snapshotsReplaceEverythingAndChangesMustBeNewer() {
        WatchReplica<Template> r = new WatchReplica<>("templates", Template::getName);
        List<List<Template>> seen = new ArrayList<>();
        r.addListener(seen::add);

        assertThat(r.apply(EventType.EVENT_TYPE_SNAPSHOT, 10, List.of(t("base", 4), t("py", 1)))).isTrue();
        assertThat(r.apply(EventType.EVENT_TYPE_UPSERT, 11, List.of(t("py", 2)))).isTrue();
        assertThat(r.apply(EventType.EVENT_TYPE_DELETE, 12, List.of(t("base", 0)))).isTrue();
        assertThat(r.items()).containsExactly(t("py", 2));
        assertThat(r.version()).isEqualTo(12);

        assertThat(r.apply(EventType.EVENT_TYPE_UPSERT, 12, List.of(t("stale", 1)))).as("not newer").isFalse();
        assertThat(r.apply(EventType.EVENT_TYPE_UNSPECIFIED, 13, List.of(t("x", 1)))).isFalse();
        assertThat(r.items()).containsExactly(t("py", 2));

        // a snapshot is authoritative even at a lower version (e.g. a hub whose store was replaced)
        assertThat(r.apply(EventType.EVENT_TYPE_SNAPSHOT, 3, List.of(t("node", 1)))).isTrue();
        assertThat(r.items()).containsExactly(t("node", 1));
        assertThat(r.version()).isEqualTo(3);
        assertThat(seen).hasSize(4);
        assertThat(r.snapshotsApplied()).isEqualTo(2);
        assertThat(seen.get(2)).containsExactly(t("py", 2));
    }
}
