package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.testing.HubWithClusters;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.worker.image.store.ImageStore;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
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
    private static final Duration T = HubWithClusters.T;

    @Test
    void aTemplateBuiltOnOneClusterRunsOnAnotherThroughTheHub(@TempDir Path dir) throws Exception {
        try (HubWithClusters hc = HubWithClusters.start(dir)) {
            Hub hub = hc.hub();
            Path w2Data = hc.workerData("w2");
            hc.join("w1");

            // build on w1, the only cluster connected
            Res requested = hc.api("POST", "/v3/templates", "{\"name\":\"across\"}");
            assertThat(requested.status()).as("request: %s", requested.json()).isEqualTo(202);
            String templateId = requested.json().get("templateID").asText();
            String buildId = requested.json().get("buildID").asText();
            Res triggered = hc.api("POST", "/v2/templates/" + templateId + "/builds/" + buildId,
                    "{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":["
                            + "\"echo made-on-w1 > /home/user/built.txt\"]}]}");
            assertThat(triggered.status()).as("trigger: %s", triggered.json()).isEqualTo(202);
            await().atMost(T).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                JsonNode s = hc.api("GET", "/templates/" + templateId + "/builds/" + buildId + "/status", null).json();
                assertThat(s.get("status").asText()).as("build: %s", s).isIn("building", "ready");
                assertThat(s.get("status").asText()).isEqualTo("ready");
            });

            // the hub holds every blob of the image: its manifest, its config and its layers
            String image = hub.store().templateBuildStore().build(buildId).orElseThrow().image();
            assertThat(image).startsWith(TemplateBuilds.imageReference(templateId, buildId) + "@sha256:");
            String manifestDigest = image.substring(image.indexOf('@') + 1);
            Set<String> hubBlobs = hc.hubBlobs();
            assertThat(hubBlobs).contains(manifestDigest).hasSizeGreaterThanOrEqualTo(3);
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 has never seen the image").isEmpty();

            // w2 joins; its pool of the built template pulls the image from the hub over its tunnel
            hc.join("w2");
            String sandboxId = hc.createOnceReady("w2::across");
            assertThat(SandboxIds.clusterOf(sandboxId)).isEqualTo("w2");
            assertThat(read(hub, "w2", sandboxId, "/home/user/built.txt")).isEqualTo("made-on-w1\n");
            assertThat(ImageStore.open(w2Data).find(image)).as("w2 stored the image it pulled").isPresent();
            Set<String> configAndLayers = new HashSet<>(hubBlobs);
            configAndLayers.remove(manifestDigest); // a pull keeps config and layers; the manifest is its record
            assertThat(HubWithClusters.blobs(ImageStore.storeDir(w2Data).resolve("blobs/sha256")))
                    .as("w2 fetched the image's config and layers from the hub").containsAll(configAndLayers);
            assertThat(hc.api("DELETE", "/sandboxes/" + sandboxId, null).status()).isEqualTo(204);

            // deleting the template removes the blobs no other build needs
            assertThat(hc.api("DELETE", "/templates/" + templateId, null).status()).isEqualTo(204);
            assertThat(hc.hubBlobs()).doesNotContainAnyElementsOf(hubBlobs);
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
