package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.manager.builds.SnapshotCopies;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.store.SnapshotStore.Snap;
import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.store.ImageStore;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
    private static final Duration T = Duration.ofSeconds(120);

    private final JsonHttp client = new JsonHttp();

    @Test
    void aSnapshotTakenOnOneClusterRunsOnAnotherThroughTheHub(@TempDir Path dir) throws Exception {
        int tunnelPort = JsonHttp.freePort();
        Path hubDir = dir.resolve("hub");
        List<WorkerAgent> workers = new ArrayList<>();
        try (Hub hub = Hub.start(HubConfig.defaults(hubDir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0), null)) {
            String token = hub.newManagerToken().orElseThrow();
            Map<String, String> key = Map.of("X-API-Key", hub.newAdminKey().orElseThrow());
            URI tunnel = URI.create("ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH);
            Path w2Data = WorkerDirs.sandboxDataDir(dir.resolve("w2"));
            for (String c : List.of("w1", "w2")) {
                String clusterToken = client.call("POST", hub.managementPort(), "/internal/clusters",
                        Map.of("Authorization", "Bearer " + token), "{\"id\":\"" + c + "\"}").json().get("token").asText();
                workers.add(WorkerAgent.start(tunnel, c, clusterToken, WorkerDirs.sandboxDataDir(dir.resolve(c))));
            }
            await().atMost(T).until(() -> hub.tunnels().registry().isConnected("w1") && hub.tunnels().registry().isConnected("w2"));

            // a sandbox on w1 writes a file, a file in a new directory, and deletes a file of its root
            String source = await().atMost(T).pollInterval(Duration.ofMillis(250)).until(() -> { // once w1 has its templates
                Res r = client.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"w1::base\"}");
                return r.status() == 201 ? r.json().get("sandboxID").asText() : null;
            }, id -> id != null);
            assertThat(sh(hub, "w1", source, "set -e; echo made-on-w1 > /home/user/s.txt; mkdir -p /srv/newdir/sub; "
                    + "echo deep > /srv/newdir/sub/f; rm /etc/debian_version; echo done")).isEqualTo("done\n");
            Res snapped = client.call("POST", hub.apiPort(), "/sandboxes/" + source + "/snapshots", key, "{\"name\":\"across\"}");
            assertThat(snapped.status()).as("snapshot: %s", snapped.json()).isEqualTo(201);
            String snapshotId = snapped.json().get("snapshotID").asText();

            // right after createSnapshot a create works, on the cluster that holds the snapshot
            String early = create(hub, key, snapshotId);
            assertThat(SandboxIds.clusterOf(early)).isEqualTo("w1");
            assertThat(sh(hub, "w1", early, "cat /home/user/s.txt")).isEqualTo("made-on-w1\n");

            // in the background the hub copies it and serves it on every cluster
            Snap snap = hub.store().snapshotStore().bySnapshotId(snapshotId).orElseThrow();
            String image = await().atMost(T).pollInterval(Duration.ofMillis(200)).until(
                    () -> hub.store().templateStore().get(snap.templateName()).orElseThrow().spec().getImage(), i -> !i.isEmpty());
            assertThat(image).startsWith(SnapshotCopies.imageReference(snap.templateName(), "sha256:"));
            assertThat(hub.store().templateStore().get(snap.templateName()).orElseThrow().clusters()).isEmpty();
            String manifestDigest = image.substring(image.indexOf('@') + 1);
            Set<String> hubBlobs = blobs(TemplateBuilds.blobDir(hubDir));
            assertThat(hubBlobs).as("manifest, config and the snapshot's layer").contains(manifestDigest).hasSize(3);

            // a sandbox pinned to w2 runs from the hub's copy: the files are there, the deleted one is not
            String there = await().atMost(T).pollInterval(Duration.ofMillis(250)).until(() -> {
                Res r = client.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"w2::" + snapshotId + "\"}");
                return r.status() == 201 ? r.json().get("sandboxID").asText() : null;
            }, id -> id != null);
            assertThat(SandboxIds.clusterOf(there)).isEqualTo("w2");
            assertThat(sh(hub, "w2", there, "cat /home/user/s.txt /srv/newdir/sub/f; stat -c '%U' /home/user/s.txt; "
                    + "test -e /etc/debian_version || echo no-debian-version")).isEqualTo("made-on-w1\ndeep\nroot\nno-debian-version\n");
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 stored the image it pulled from the hub").isPresent();
            assertThat(ImageStore.open(w2Data).snapshots()).as("w2 never had the snapshot itself").isEmpty();
            // the source cluster keeps serving it too
            String again = create(hub, key, "w1::" + snapshotId);
            assertThat(sh(hub, "w1", again, "cat /srv/newdir/sub/f")).isEqualTo("deep\n");

            // deleting the snapshot removes its blobs from the hub (nothing else uses them)
            for (String id : List.of(source, early, there, again)) {
                assertThat(client.call("DELETE", hub.apiPort(), "/sandboxes/" + id, key, null).status()).isEqualTo(204);
            }
            assertThat(client.call("DELETE", hub.apiPort(), "/templates/"
                    + java.net.URLEncoder.encode(snapshotId, StandardCharsets.UTF_8), key, null).status()).isEqualTo(204);
            assertThat(blobs(TemplateBuilds.blobDir(hubDir))).doesNotContainAnyElementsOf(hubBlobs);
            assertThat(client.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"w2::" + snapshotId + "\"}")
                    .status()).isEqualTo(404);
        } finally {
            workers.forEach(WorkerAgent::close);
        }
    }

    private String create(Hub hub, Map<String, String> key, String templateId) throws Exception {
        Res r = client.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"" + templateId + "\"}");
        assertThat(r.status()).as("create %s: %s", templateId, r.json()).isEqualTo(201);
        return r.json().get("sandboxID").asText();
    }

    /** Runs {@code sh -c cmd} as root in the sandbox over the hub's tunnel to its worker; its stdout. */
    private static String sh(Hub hub, String cluster, String sandboxId, String cmd) {
        CompletableFuture<String> done = new CompletableFuture<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StreamObserver<ExecRequest> req = ProcessServiceGrpc.newStub(hub.tunnels().channel(cluster)).exec(new StreamObserver<>() {
            @Override
            public void onNext(ExecEvent e) {
                if (e.hasStdout()) {
                    synchronized (out) {
                        out.writeBytes(e.getStdout().toByteArray());
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                synchronized (out) {
                    done.complete(out.toString(StandardCharsets.UTF_8));
                }
            }
        });
        req.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(sandboxId).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs(cmd).setUser("root"))).build());
        String result = done.orTimeout(60, TimeUnit.SECONDS).join();
        req.onCompleted();
        return result;
    }

    private static Set<String> blobs(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve("sha256"))) {
            return s.map(p -> "sha256:" + p.getFileName()).collect(Collectors.toCollection(HashSet::new));
        }
    }
}
