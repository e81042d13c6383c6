package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxSession;
import io.agentbox.wsproxy.TunnelRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Standalone} over its real loopback tunnel: reconnect after a drop, and cleanup on close. */
class StandaloneLifecycleTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void workerRedialsAfterTheTunnelDropsAndCloseRemovesEverySandbox(@TempDir Path dir) throws Exception {
        Path sandboxLayers;
        String sandboxId;
        try (Standalone s = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, Duration.ofSeconds(60), line -> {})) {
            String key = s.hub().newAdminKey().orElseThrow();
            String base = "http://127.0.0.1:" + s.hub().apiPort();
            assertThat(create(base, key).statusCode()).isEqualTo(201);

            // drop the tunnel from the hub's side: the worker notices and redials with backoff
            TunnelRegistry registry = s.hub().tunnels().registry();
            MuxSession first = registry.session(Standalone.CLUSTER_ID);
            first.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                MuxSession now = registry.session(Standalone.CLUSTER_ID);
                return now != null && now != first;
            });

            // the hub's channel to the cluster works on the new session
            HttpResponse<String> again = create(base, key);
            assertThat(again.statusCode()).as(again.body()).isEqualTo(201);
            sandboxId = again.body().replaceAll(".*\"sandboxID\"\\s*:\\s*\"([^\"]+)\".*", "$1");
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(base + "/health"))
                    .header("E2b-Sandbox-Id", sandboxId).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(204);

            sandboxLayers = io.agentbox.worker.WorkerDirs.sandboxDataDir(dir.resolve("data").resolve("worker"))
                    .resolve("sandboxes");
            try (Stream<Path> layers = Files.list(sandboxLayers)) {
                assertThat(layers.count()).as("2 claimed + warm pool").isGreaterThanOrEqualTo(2);
            }
        }
        // close() = what Ctrl-C runs: no sandbox process and no layer is left
        try (Stream<Path> layers = Files.list(sandboxLayers)) {
            assertThat(layers.toList()).isEmpty();
        }
        // crun removes a sandbox's cgroup once its last process is gone
        assertThat(Path.of("/sys/fs/cgroup/pids/agentbox", sandboxId)).doesNotExist();
        assertThat(Path.of("/sys/fs/cgroup/agentbox", sandboxId)).doesNotExist();
    }

    private HttpResponse<String> create(String base, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + "/sandboxes"))
                .header("X-API-Key", key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
