package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.store.StoreConfig;
import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.SandboxHost;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.image.Preparation;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TemplateImages;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Template readiness end to end: a real hub and two real workers (bubblewrap sandboxes) over
 * their tunnels. The workers' image preparation is driven by the test ({@link Images}; the image
 * store is built on another branch); everything after it is real: the pool status in the capacity
 * reports, cluster status, the template's aggregate status, routing that skips clusters where the
 * image is not ready, and 503s with the message from the hub's E2B API (v1 and v2) and from a
 * worker's own API.
 */
class TemplateReadinessTest {
    private static final Duration T = Duration.ofSeconds(60);
    private static final String IMAGE = "docker.io/library/python:3.12";

    private final JsonHttp http = new JsonHttp();

    /**
     * One worker's image preparation, steered by the test: preparations made while the image is
     * "pulling" wait for {@link #ready} or {@link #fail}; ones made after a failure fail at once
     * with the same message (so the worker's retries keep it in error).
     */
    static final class Images implements TemplateImages {
        private final List<CompletableFuture<Optional<SandboxImage>>> waiting = new CopyOnWriteArrayList<>();
        private volatile ImageState state = ImageState.pulling("");

        @Override
        public Preparation prepare(Template t) {
            if (t.getImage().isEmpty() || state.isReady()) {
                return Preparation.ready(Optional.empty());
            }
            if (!state.isReady() && state.status().equals("error")) {
                return Preparation.failed(state.message());
            }
            CompletableFuture<Optional<SandboxImage>> result = new CompletableFuture<>();
            waiting.add(result);
            return new Preparation() {
                @Override
                public ImageState state() {
                    return state;
                }

                @Override
                public CompletableFuture<Optional<SandboxImage>> result() {
                    return result;
                }

                @Override
                public void cancel() {}
            };
        }

        void progress(String message) {
            state = ImageState.pulling(message);
        }

        /** Ready with the runtime's built-in root, which the local runtime on this branch can run. */
        void ready() {
            state = ImageState.READY;
            waiting.forEach(f -> f.complete(Optional.empty()));
        }

        void fail(String message) {
            state = ImageState.error(message);
            waiting.forEach(f -> f.completeExceptionally(new IllegalStateException(message)));
        }
    }

    private Res manage(Hub hub, String token, String method, String path, String body) throws Exception {
        return http.call(method, hub.managementPort(), path, Map.of("Authorization", "Bearer " + token), body);
    }

    private static Map<String, JsonNode> pools(TemplateReadinessTest t, Hub hub, String token, String template) throws Exception {
        Map<String, JsonNode> out = new TreeMap<>();
        for (JsonNode c : t.manage(hub, token, "GET", "/internal/clusters/status", null).json().get("clusters")) {
            for (JsonNode p : c.path("pools")) {
                if (p.get("template").asText().equals(template)) {
                    out.put(c.get("id").asText(), p);
                }
            }
        }
        return out;
    }

    @Test
    void createsWaitForTheImageAndRoutingSkipsClustersWhereItIsNotReady(@TempDir Path dir) throws Exception {
        Hub hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withStore(StoreConfig.h2(dir.resolve("hub")))
                .withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0).withManagement("127.0.0.1", 0), null);
        List<WorkerAgent> workers = new ArrayList<>();
        Map<String, Images> images = Map.of("c1", new Images(), "c2", new Images());
        try {
            String token = hub.newManagerToken().orElseThrow();
            String admin = hub.newAdminKey().orElseThrow();
            Map<String, String> key = Map.of("X-API-Key", admin);
            assertThat(manage(hub, token, "PUT", "/internal/templates/base", "{\"poolSize\":0}").status()).isEqualTo(200);
            URI tunnel = URI.create("ws://127.0.0.1:" + hub.tunnelPort() + TunnelProtocol.PATH);
            for (String c : List.of("c1", "c2")) {
                String clusterToken = manage(hub, token, "POST", "/internal/clusters", "{\"id\":\"" + c + "\"}")
                        .json().get("token").asText();
                SandboxHost host = SandboxHost.start(c, WorkerDirs.sandboxDataDir(dir.resolve(c)), 8, List.of(), images.get(c));
                workers.add(WorkerAgent.start(tunnel, c, clusterToken, host));
            }
            Res created = manage(hub, token, "POST", "/internal/templates", "{\"name\":\"py\",\"poolSize\":1,\"image\":\"python:3.12\"}");
            assertThat(created.status()).as("%s", created.json()).isEqualTo(201);

            // both workers pull: cluster status and the template show it, creates answer 503 with the progress
            images.get("c1").progress("3/7 layers, 412/1630 MB");
            images.get("c2").progress("1/7 layers, 10/1630 MB");
            await().atMost(T).untilAsserted(() -> {
                Map<String, JsonNode> p = pools(this, hub, token, "py");
                assertThat(p.keySet()).containsExactly("c1", "c2");
                assertThat(p.get("c1").get("status").asText()).isEqualTo("pulling");
                assertThat(p.get("c1").get("statusMessage").asText()).isEqualTo("3/7 layers, 412/1630 MB");
                assertThat(p.get("c2").get("statusMessage").asText()).isEqualTo("1/7 layers, 10/1630 MB");
            });
            String bothPulling = "pulling " + IMAGE + " on cluster c1: 3/7 layers, 412/1630 MB; pulling " + IMAGE
                    + " on cluster c2: 1/7 layers, 10/1630 MB";
            JsonNode t = manage(hub, token, "GET", "/internal/templates/py", null).json();
            assertThat(t.get("status").asText()).isEqualTo("pulling");
            assertThat(t.get("statusMessage").asText()).isEqualTo(bothPulling);
            for (String path : List.of("/sandboxes", "/v2/sandboxes")) {
                Res r = http.call("POST", hub.apiPort(), path, key, "{\"templateID\":\"py\"}");
                assertThat(r.status()).as(path + ": " + r.json()).isEqualTo(503);
                assertThat(r.json().get("message").asText()).isEqualTo("template 'py' is not ready: " + bothPulling);
            }
            assertThat(pools(this, hub, token, "py").values()).allMatch(p -> p.get("idle").asInt() == 0);

            // c2 fails (and keeps failing on retries): still pulling overall while c1 pulls
            images.get("c2").fail("image " + IMAGE + ": unauthorized: authentication required");
            await().atMost(T).untilAsserted(() -> {
                JsonNode p = pools(this, hub, token, "py").get("c2");
                assertThat(p.get("status").asText()).isEqualTo("error");
                assertThat(p.get("statusMessage").asText()).startsWith("image " + IMAGE + ": unauthorized");
            });
            t = manage(hub, token, "GET", "/internal/templates/py", null).json();
            assertThat(t.get("status").asText()).isEqualTo("pulling");
            assertThat(t.get("statusMessage").asText()).startsWith("pulling " + IMAGE + " on cluster c1: 3/7 layers")
                    .contains("; error on cluster c2: image " + IMAGE + ": unauthorized");

            // c1 ready: the template is ready, and every create goes to c1, never to c2 where it is not
            images.get("c1").ready();
            await().atMost(T).untilAsserted(() -> {
                JsonNode p = pools(this, hub, token, "py").get("c1");
                assertThat(p.get("status").asText()).isEqualTo("ready");
                assertThat(p.get("idle").asInt()).isEqualTo(1);
            });
            t = manage(hub, token, "GET", "/internal/templates/py", null).json();
            assertThat(t.get("status").asText()).isEqualTo("ready");
            assertThat(t.get("statusMessage").asText()).startsWith("error on cluster c2: image " + IMAGE);
            for (int i = 0; i < 3; i++) {
                Res r = http.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"py\"}");
                assertThat(r.status()).as("create: %s", r.json()).isEqualTo(201);
                String id = r.json().get("sandboxID").asText();
                assertThat(SandboxIds.clusterOf(id)).isEqualTo("c1");
                assertThat(http.call("DELETE", hub.apiPort(), "/sandboxes/" + id, key, null).status()).isEqualTo(204);
            }

            // pinned to c2: 503 naming c2's error; c2's own API answers the same
            Res pinned = http.call("POST", hub.apiPort(), "/sandboxes", key, "{\"templateID\":\"c2::py\"}");
            assertThat(pinned.status()).isEqualTo(503);
            assertThat(pinned.json().get("message").asText()).startsWith("template 'py' is not ready: error on cluster c2: "
                    + "image " + IMAGE + ": unauthorized: authentication required");
            try (WorkerApi local = WorkerApi.start(workers.get(1), "127.0.0.1", 0)) {
                await().atMost(T).until(() -> http.call("GET", local.port(), "/sandboxes", key, null).status() == 200);
                Res r = http.call("POST", local.port(), "/sandboxes", key, "{\"templateID\":\"py\"}");
                assertThat(r.status()).as("worker API: %s", r.json()).isEqualTo(503);
                assertThat(r.json().get("message").asText()).startsWith("template 'py' is not ready: error on cluster c2: "
                        + "image " + IMAGE + ": unauthorized: authentication required");
            }
        } finally {
            workers.forEach(WorkerAgent::close);
            hub.close();
        }
    }
}
