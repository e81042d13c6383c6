package io.agentbox.manager.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.store.SnapshotStore.Created;
import io.agentbox.manager.store.SnapshotStore.Snap;
import io.agentbox.manager.testing.ManualClock;
import io.agentbox.protocol.v1.Template;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots (migration V7) on every store database: E2B ids and names, a name taken again adds or
 * replaces a tag, listing newest first with filters and paging, delete by tag or whole, the serving
 * template pinned to the cluster, recorded for the template watch and hidden from the team-less
 * template listing, and changed only through the snapshot (pool size).
 */
abstract class SnapshotStoreContract {
    @TempDir
    Path dataDir;
    final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    HubStore hub;
    SnapshotStore store;
    final AtomicInteger ids = new AtomicInteger();

    abstract StoreConfig freshDatabase(Path dataDir);

    @BeforeEach
    void open() {
        hub = HubStore.open(freshDatabase(dataDir), dataDir, clock);
        store = hub.snapshotStore();
    }

    @AfterEach
    void close() {
        hub.close();
    }

    Created take(String team, String alias, String tag, String sandbox) {
        clock.advance(Duration.ofSeconds(1));
        String name = "snap-" + ids.incrementAndGet();
        Template t = Template.newBuilder().setName(name).setSnapshot(name).setNetwork("none").setMemoryMb(512).build();
        return store.create(team, alias, tag, sandbox, "c1", t, () -> "tid" + ids.incrementAndGet());
    }

    @Test
    void idsNamesTagsListingAndDelete() {
        Snap unnamed = take("acme", "", "default", "sbx1").snap();
        assertThat(unnamed.snapshotId()).isEqualTo(unnamed.templateId() + ":default");
        assertThat(unnamed.names()).isEmpty();
        Snap named = take("acme", "web", "v1", "sbx1").snap();
        assertThat(named.snapshotId()).isEqualTo("acme/web:v1");
        assertThat(named.names()).containsExactly("acme/web");
        Snap v2 = take("acme", "web", "v2", "sbx2").snap();
        assertThat(v2.templateId()).as("a name taken again keeps its template").isEqualTo(named.templateId());
        Created again = take("acme", "web", "v2", "sbx2");
        assertThat(again.replaced()).contains(v2);
        take("other", "web", "v1", "sbx9");

        // the serving template: pinned, with the snapshot id, hidden from the E2B template listing
        TemplateRecord served = hub.templateStore().get(again.snap().templateName()).orElseThrow();
        assertThat(served.clusters()).containsExactly("c1");
        assertThat(served.spec().getSnapshot()).isEqualTo(again.snap().templateName());
        assertThat(hub.templates()).extracting(Template::getName).doesNotContain(again.snap().templateName());
        assertThat(hub.template(again.snap().templateName())).isEmpty();
        assertThat(hub.templateStore().get(v2.templateName())).as("the replaced tag's template is gone").isEmpty();
        assertThat(hub.changeLog().changesSince(ChangeLog.Kind.TEMPLATE, 0, 100)).extracting(ChangeLog.Change::name)
                .contains(v2.templateName(), again.snap().templateName());

        assertThat(store.list("acme", null, null, null, 0, 100)).extracting(Snap::snapshotId)
                .containsExactly("acme/web:v2", "acme/web:v1", unnamed.snapshotId());
        assertThat(store.list("acme", null, null, null, 1, 1)).extracting(Snap::snapshotId).containsExactly("acme/web:v1");
        assertThat(store.list("acme", "sbx1", null, null, 0, 100)).extracting(Snap::snapshotId)
                .containsExactly("acme/web:v1", unnamed.snapshotId());
        assertThat(store.list("acme", null, "web", "v1", 0, 100)).extracting(Snap::snapshotId).containsExactly("acme/web:v1");
        assertThat(store.list("acme", null, unnamed.templateId(), null, 0, 100)).containsExactly(unnamed);
        assertThat(store.list("acme", null, "nope", null, 0, 100)).isEmpty();
        assertThat(store.find("acme", "web", "v1")).contains(named);
        assertThat(store.find("other", unnamed.templateId(), "default")).as("another team's").isEmpty();

        // the serving template changes only through the snapshot
        assertThatThrownBy(() -> hub.templateStore().delete(named.templateName(), null)).isInstanceOf(StoreException.class)
                .hasMessageContaining("serves snapshot sandboxes");
        assertThat(store.setPoolSize(named, 3).spec().getPoolSize()).isEqualTo(3);
        assertThat(hub.templateStore().get(named.templateName()).orElseThrow().spec().getSnapshot()).isEqualTo(named.templateName());
        assertThatThrownBy(() -> store.setPoolSize(named, 1001)).isInstanceOf(StoreException.class);

        assertThat(store.delete("acme", "web", "v1")).containsExactly(named);
        assertThat(store.delete("acme", "web", "v1")).isEmpty();
        assertThat(store.delete("acme", "web", null)).extracting(Snap::tag).containsExactly("v2");
        assertThat(hub.templateStore().get(named.templateName())).isEmpty();
        assertThat(store.list("acme", null, null, null, 0, 100)).containsExactly(unnamed);
        assertThat(store.list("other", null, null, null, 0, 100)).hasSize(1);
    }

    @Test
    void theHubsCopyServesASnapshotOnEveryClusterUntilItIsDeleted() {
        Snap snap = take("acme", "web", "v1", "sbx1").snap();
        String image = "builds.agentbox.internal/snapshots/" + snap.templateName() + "@sha256:" + "a".repeat(64);
        long before = hub.templateStore().get(snap.templateName()).orElseThrow().resourceVersion();

        assertThat(store.serveFromHub(snap, image)).isTrue();
        TemplateRecord served = hub.templateStore().get(snap.templateName()).orElseThrow();
        assertThat(served.spec().getImage()).isEqualTo(image);
        assertThat(served.spec().getSnapshot()).as("still a snapshot's template").isEqualTo(snap.templateName());
        assertThat(served.clusters()).as("every cluster").isEmpty();
        assertThat(served.resourceVersion()).as("the watch sees the change").isGreaterThan(before);
        assertThat(store.find("acme", "web", "v1").orElseThrow().clusterId()).as("where it was made").isEqualTo("c1");
        assertThatThrownBy(() -> store.serveFromHub(snap, "docker.io/library/busybox:latest"))
                .isInstanceOf(StoreException.class).hasMessageContaining("the hub's copy");

        // replaced or deleted meanwhile: nothing changes
        Snap replacing = take("acme", "web", "v1", "sbx2").snap();
        assertThat(store.serveFromHub(snap, image)).isFalse();
        assertThat(hub.templateStore().get(replacing.templateName()).orElseThrow().spec().getImage()).isEmpty();
        store.delete("acme", "web", null);
        assertThat(store.serveFromHub(replacing, image)).isFalse();
        assertThat(hub.templateStore().get(replacing.templateName())).isEmpty();
    }
}
