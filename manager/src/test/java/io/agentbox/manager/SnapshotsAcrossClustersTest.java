package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.manager.builds.SnapshotCopies;
import io.agentbox.manager.store.SnapshotStore.Snap;
import io.agentbox.manager.testing.HubWithClusters;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.worker.image.store.ImageStore;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot taken on one worker cluster runs on another (docs/snapshots-and-reset.md, "Across
 * clusters"): a hub with two worker clusters on loopback, each over its own tunnel. A sandbox on w1
 * writes files, makes a directory and deletes a file of its root (a whiteout in the snapshot layer);
 * {@code POST /sandboxes/{id}/snapshots} answers at once and a create from the snapshot right after
 * runs on w1; in the background the hub has w1 export the snapshot as an OCI image and copies its
 * blobs; the snapshot's template then targets every cluster, w2 pulls the image from the hub over
 * its tunnel, and a sandbox pinned to w2 sees the files and not the deleted one. Deleting the
 * snapshot removes the hub's blobs of it.
 */
class SnapshotsAcrossClustersTest {
    private static final Duration T = HubWithClusters.T;

    @Test
    void aSnapshotTakenOnOneClusterRunsOnAnotherThroughTheHub(@TempDir Path dir) throws Exception {
        try (HubWithClusters hc = HubWithClusters.start(dir)) {
            Hub hub = hc.hub();
            Path w2Data = hc.workerData("w2");
            hc.join("w1");
            hc.join("w2");

            // a sandbox on w1 writes a file, a file in a new directory, and deletes a file of its root
            String source = hc.createOnceReady("w1::base"); // once w1 has its templates
            assertThat(hc.sh("w1", source, "set -e; echo made-on-w1 > /home/user/s.txt; mkdir -p /srv/newdir/sub; "
                    + "echo deep > /srv/newdir/sub/f; rm /etc/debian_version; echo done")).isEqualTo("done\n");
            Res snapped = hc.api("POST", "/sandboxes/" + source + "/snapshots", "{\"name\":\"across\"}");
            assertThat(snapped.status()).as("snapshot: %s", snapped.json()).isEqualTo(201);
            String snapshotId = snapped.json().get("snapshotID").asText();

            // right after createSnapshot a create works, on the cluster that holds the snapshot
            String early = hc.create(snapshotId);
            assertThat(SandboxIds.clusterOf(early)).isEqualTo("w1");
            assertThat(hc.sh("w1", early, "cat /home/user/s.txt")).isEqualTo("made-on-w1\n");

            // in the background the hub copies it and serves it on every cluster
            Snap snap = hub.store().snapshotStore().bySnapshotId(snapshotId).orElseThrow();
            String image = await().atMost(T).pollInterval(Duration.ofMillis(200)).until(
                    () -> hub.store().templateStore().get(snap.templateName()).orElseThrow().spec().getImage(), i -> !i.isEmpty());
            assertThat(image).startsWith(SnapshotCopies.imageReference(snap.templateName(), "sha256:"));
            assertThat(hub.store().templateStore().get(snap.templateName()).orElseThrow().clusters()).isEmpty();
            String manifestDigest = image.substring(image.indexOf('@') + 1);
            Set<String> hubBlobs = hc.hubBlobs();
            assertThat(hubBlobs).as("manifest, config and the snapshot's layer").contains(manifestDigest).hasSize(3);

            // a sandbox pinned to w2 runs from the hub's copy: the files are there, the deleted one is not
            String there = hc.createOnceReady("w2::" + snapshotId);
            assertThat(SandboxIds.clusterOf(there)).isEqualTo("w2");
            assertThat(hc.sh("w2", there, "cat /home/user/s.txt /srv/newdir/sub/f; stat -c '%U' /home/user/s.txt; "
                    + "test -e /etc/debian_version || echo no-debian-version")).isEqualTo("made-on-w1\ndeep\nroot\nno-debian-version\n");
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 stored the image it pulled from the hub").isPresent();
            assertThat(ImageStore.open(w2Data).snapshots()).as("w2 never had the snapshot itself").isEmpty();
            // the source cluster keeps serving it too
            String again = hc.create("w1::" + snapshotId);
            assertThat(hc.sh("w1", again, "cat /srv/newdir/sub/f")).isEqualTo("deep\n");

            // deleting the snapshot removes its blobs from the hub (nothing else uses them)
            for (String id : List.of(source, early, there, again)) {
                assertThat(hc.api("DELETE", "/sandboxes/" + id, null).status()).isEqualTo(204);
            }
            assertThat(hc.api("DELETE", "/templates/" + URLEncoder.encode(snapshotId, StandardCharsets.UTF_8), null).status())
                    .isEqualTo(204);
            assertThat(hc.hubBlobs()).doesNotContainAnyElementsOf(hubBlobs);
            assertThat(hc.api("POST", "/sandboxes", "{\"templateID\":\"w2::" + snapshotId + "\"}").status()).isEqualTo(404);
        }
    }
}
