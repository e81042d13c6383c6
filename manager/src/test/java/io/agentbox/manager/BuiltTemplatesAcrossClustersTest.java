package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.store.ImageStore;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A template built on one worker cluster runs on another (docs/template-builds.md, "Where built
 * layers live"): a hub with two worker clusters on loopback, each over its own tunnel. The build
 * runs on w1 while it is the only cluster; the hub copies the built image's blobs from w1 before
 * the build turns ready; w2 joins afterwards, pulls the image from the hub over its tunnel, and a
 * sandbox pinned to w2 reads the file the build wrote. Deleting the template removes the hub's
 * blobs.
 */
class BuiltTemplatesAcrossClustersTest {
    private static final Duration T = Duration.ofSeconds(120);

    private final JsonHttp client = new JsonHttp();

    @Test
    void aTemplateBuiltOnOneClusterRunsOnAnotherThroughTheHub(@TempDir Path dir) throws Exception {
        int tunnelPort = JsonHttp.freePort();
        Path hubDir = dir.resolve("hub");
        List<WorkerAgent> workers = new ArrayList<>();
        try (Hub hub = Hub.start(HubConfig.defaults(hubDir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0), null)) {
            String token = hub.newManagerToken().orElseThrow();
            String admin = hub.newAdminKey().orElseThrow();
            Map<String, String> key = Map.of("X-API-Key", admin);
            Map<String, String> tokens = new java.util.TreeMap<>();
            for (String c : List.of("w1", "w2")) {
                tokens.put(c, client.call("POST", hub.managementPort(), "/internal/clusters",
                        Map.of("Authorization", "Bearer " + token), "{\"id\":\"" + c + "\"}").json().get("token").asText());
            }
            URI tunnel = URI.create("ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH);
            Path w1Data = WorkerDirs.sandboxDataDir(dir.resolve("w1"));
            Path w2Data = WorkerDirs.sandboxDataDir(dir.resolve("w2"));
            workers.add(WorkerAgent.start(tunnel, "w1", tokens.get("w1"), w1Data));
            await().atMost(T).until(() -> hub.tunnels().registry().isConnected("w1"));

            // build on w1, the only cluster connected
            Res requested = client.call("POST", hub.apiPort(), "/v3/templates", key, "{\"name\":\"across\"}");
            assertThat(requested.status()).as("request: %s", requested.json()).isEqualTo(202);
            String templateId = requested.json().get("templateID").asText();
            String buildId = requested.json().get("buildID").asText();
            Res triggered = client.call("POST", hub.apiPort(), "/v2/templates/" + templateId + "/builds/" + buildId, key,
                    "{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":["
                            + "\"echo made-on-w1 > /home/user/built.txt\"]}]}");
            assertThat(triggered.status()).as("trigger: %s", triggered.json()).isEqualTo(202);
            await().atMost(T).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                JsonNode s = client.call("GET", hub.apiPort(), "/templates/" + templateId + "/builds/" + buildId + "/status",
                        key, null).json();
                assertThat(s.get("status").asText()).as("build: %s", s).isIn("building", "ready");
                assertThat(s.get("status").asText()).isEqualTo("ready");
            });

            // the hub holds every blob of the image: its manifest, its config and its layers
            String image = hub.store().templateBuildStore().build(buildId).orElseThrow().image();
            assertThat(image).startsWith(TemplateBuilds.imageReference(templateId, buildId) + "@sha256:");
            String manifestDigest = image.substring(image.indexOf('@') + 1);
            Set<String> hubBlobs = blobs(TemplateBuilds.blobDir(hubDir));
            assertThat(hubBlobs).contains(manifestDigest).hasSizeGreaterThanOrEqualTo(3);
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 has never seen the image").isEmpty();

            // w2 joins; its pool of the built template pulls the image from the hub over its tunnel
            workers.add(WorkerAgent.start(tunnel, "w2", tokens.get("w2"), w2Data));
            String sandboxId = await().atMost(T).pollInterval(Duration.ofMillis(250)).until(() -> {
                Res r = client.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"w2::across\"}");
                return r.status() == 201 ? r.json().get("sandboxID").asText() : null;
            }, id -> id != null);
            assertThat(SandboxIds.clusterOf(sandboxId)).isEqualTo("w2");
            assertThat(read(hub, "w2", sandboxId, "/home/user/built.txt")).isEqualTo("made-on-w1\n");
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 stored the image it pulled").isPresent();
            Set<String> configAndLayers = new java.util.HashSet<>(hubBlobs);
            configAndLayers.remove(manifestDigest); // a pull keeps config and layers; the manifest is its record
            assertThat(blobs(ImageStore.storeDir(w2Data).resolve("blobs/sha256")))
                    .as("w2 fetched the image's config and layers from the hub").containsAll(configAndLayers);
            assertThat(client.call("DELETE", hub.apiPort(), "/sandboxes/" + sandboxId, key, null).status()).isEqualTo(204);

            // deleting the template removes the blobs no other build needs
            assertThat(client.call("DELETE", hub.apiPort(), "/templates/" + templateId, key, null).status()).isEqualTo(204);
            assertThat(blobs(TemplateBuilds.blobDir(hubDir))).doesNotContainAnyElementsOf(hubBlobs);
        } finally {
            workers.forEach(WorkerAgent::close);
        }
    }

    /** Digests of the blobs in a content-addressed directory ({@code sha256/<hex>} or its {@code sha256} directory). */
    private static Set<String> blobs(Path dir) throws Exception {
        Path d = Files.isDirectory(dir.resolve("sha256")) ? dir.resolve("sha256") : dir;
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> "sha256:" + p.getFileName()).collect(Collectors.toSet());
        }
    }

    private static String read(Hub hub, String cluster, String sandboxId, String path) {
        Iterator<FileChunk> chunks = FilesystemServiceGrpc.newBlockingStub(hub.tunnels().channel(cluster))
                .readFile(PathRequest.newBuilder().setSandboxId(sandboxId).setPath(path).setUser("user").build());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        chunks.forEachRemaining(c -> out.writeBytes(c.getData().toByteArray()));
        return out.toString(StandardCharsets.UTF_8);
    }
}
