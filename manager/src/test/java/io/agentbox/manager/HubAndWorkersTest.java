package io.agentbox.manager;

import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.manager.testing.JsonHttp.Res;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.store.HubStore;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub and three workers on loopback, each over its own tunnel; one worker is a separate JVM
 * ({@code agentbox worker}). Keys propagate; creating, resizing and deleting a template creates,
 * resizes and drains the pool on every worker; claims spread by capacity, {@code CLUSTER::TEMPLATE}
 * pins a cluster, a killed
 * worker is avoided, a restarted hub sees every worker reconnect and resume from its versions, and
 * a restarted worker resyncs.
 */
class HubAndWorkersTest {

    private static final Duration T = Duration.ofSeconds(60);

    private final JsonHttp client = new JsonHttp();

    private Res call(String method, int port, String path, Map<String, String> headers, String body) throws Exception {
        return client.call(method, port, path, headers, body);
    }

    private Res manage(Hub hub, String token, String method, String path, String body) throws Exception {
        return call(method, hub.managementPort(), path, Map.of("Authorization", "Bearer " + token), body);
    }

    private static Map<String, JsonNode> status(HubAndWorkersTest t, Hub hub, String token) throws Exception {
        Map<String, JsonNode> out = new TreeMap<>();
        for (JsonNode c : t.manage(hub, token, "GET", "/internal/clusters/status", null).json().get("clusters")) {
            out.put(c.get("id").asText(), c);
        }
        return out;
    }

    private static Hub startHub(Path dir, int tunnelPort) throws Exception {
        return Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0), null);
    }

    private String create(Hub hub, String adminKey, String template) throws Exception {
        Res r = call("POST", hub.apiPort(), "/sandboxes", Map.of("X-API-Key", adminKey), "{\"templateID\":\"" + template + "\"}");
        assertThat(r.status()).as("create: %s", r.json()).isEqualTo(201);
        return r.json().get("sandboxID").asText();
    }

    private void kill(Hub hub, String adminKey, String id) throws Exception {
        assertThat(call("DELETE", hub.apiPort(), "/sandboxes/" + id, Map.of("X-API-Key", adminKey), null).status()).isEqualTo(204);
    }

    private static int idle(JsonNode cluster, String template) {
        for (JsonNode p : cluster.get("pools")) {
            if (p.get("template").asText().equals(template)) {
                return p.get("idle").asInt();
            }
        }
        return 0;
    }

    /** Waits until every listed cluster is connected and reports {@code idle} idle sandboxes of base. */
    private void awaitIdle(Hub hub, String token, Set<String> clusters, int idle) {
        await().atMost(T).untilAsserted(() -> {
            Map<String, JsonNode> s = status(this, hub, token);
            for (String c : clusters) {
                assertThat(s.get(c).get("connected").asBoolean()).as(c + " connected").isTrue();
                assertThat(idle(s.get(c), "base")).as(c + " idle base sandboxes").isEqualTo(idle);
            }
        });
    }

    @Test
    void keysTemplatesRoutingAndRestartsAcrossThreeWorkers(@TempDir Path dir) throws Exception {
        int tunnelPort = JsonHttp.freePort();
        Path hubDir = dir.resolve("hub");
        java.util.concurrent.atomic.AtomicReference<Hub> current = new java.util.concurrent.atomic.AtomicReference<>(
                startHub(hubDir, tunnelPort));
        Hub hub = current.get();
        Process separate = null;
        List<WorkerAgent> workers = new ArrayList<>();
        try {
            String token = hub.newManagerToken().orElseThrow();
            String admin = hub.newAdminKey().orElseThrow();
            assertThat(manage(hub, token, "PUT", "/internal/templates/base", "{\"poolSize\":1}").status()).isEqualTo(200);
            Map<String, String> tokens = new TreeMap<>();
            for (String c : List.of("w1", "w2", "w3")) {
                tokens.put(c, manage(hub, token, "POST", "/internal/clusters", "{\"id\":\"" + c + "\"}").json().get("token").asText());
            }
            URI tunnel = URI.create("ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH);
            workers.add(WorkerAgent.start(tunnel, "w1", tokens.get("w1"), WorkerDirs.sandboxDataDir(dir.resolve("w1"))));
            workers.add(WorkerAgent.start(tunnel, "w2", tokens.get("w2"), WorkerDirs.sandboxDataDir(dir.resolve("w2"))));
            Path tokenFile = Files.writeString(dir.resolve("w3.token"), tokens.get("w3"));
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            separate = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    "io.agentbox.manager.cli.AgentboxCommand", "worker", "--hub", tunnel.toString(), "--cluster-id", "w3",
                    "--token-file", tokenFile.toString(), "--data-dir", dir.resolve("w3").toString(), "--api-port", "0")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("w3.log").toFile()).start();
            awaitIdle(hub, token, Set.of("w1", "w2", "w3"), 1);

            // an API key reaches every worker as a hash, and its revocation too; w1 also serves the
            // public API inside its cluster with the keys the hub pushed
            JsonNode key = manage(hub, token, "POST", "/internal/api-keys", "{\"team\":\"t1\"}").json();
            String plaintext = key.get("key").asText();
            String hash = ApiKeys.hash(plaintext);
            long created = key.get("resourceVersion").asLong();
            awaitAcked(hub, token, "api-keys", created, Set.of("w1", "w2", "w3"));
            assertThat(workers).allMatch(w -> w.apiKeys().get(hash) != null);
            try (WorkerApi local = WorkerApi.start(workers.get(0), "127.0.0.1", 0)) {
                Map<String, String> auth = Map.of("X-API-Key", plaintext);
                assertThat(call("GET", local.port(), "/sandboxes", auth, null).status()).isEqualTo(200);
                Res made = call("POST", local.port(), "/sandboxes", auth, "{\"templateID\":\"base\"}");
                assertThat(made.status()).as("local create: %s", made.json()).isEqualTo(201);
                String localId = made.json().get("sandboxID").asText();
                assertThat(SandboxIds.clusterOf(localId)).isEqualTo("w1");
                assertThat(call("GET", local.port(), "/sandboxes/" + localId, auth, null).status()).isEqualTo(200);
                assertThat(call("GET", local.port(), "/sandboxes", Map.of("X-API-Key", admin), null).status())
                        .as("the hub's admin key is pushed too").isEqualTo(200);
                assertThat(call("DELETE", local.port(), "/sandboxes/" + localId, auth, null).status()).isEqualTo(204);

                long revoked = manage(hub, token, "DELETE", "/internal/api-keys/" + key.get("id").asText(), null)
                        .json().get("resourceVersion").asLong();
                awaitAcked(hub, token, "api-keys", revoked, Set.of("w1", "w2", "w3"));
                assertThat(workers).allMatch(w -> w.apiKeys().get(hash) == null);
                assertThat(call("GET", local.port(), "/sandboxes", auth, null).status()).as("revoked at the hub").isEqualTo(401);
            }
            awaitIdle(hub, token, Set.of("w1", "w2", "w3"), 1);

            // a new template makes its pool appear on every worker
            assertThat(manage(hub, token, "POST", "/internal/templates", "{\"name\":\"t2\",\"poolSize\":1}").status()).isEqualTo(201);
            await().atMost(T).untilAsserted(() -> {
                for (JsonNode c : status(this, hub, token).values()) {
                    assertThat(c.get("pools").findValuesAsText("template")).as(c.get("id").asText()).contains("t2");
                }
            });

            // resizing it resizes every worker's pool; deleting it drains them
            assertThat(manage(hub, token, "PUT", "/internal/templates/t2", "{\"poolSize\":2}").status()).isEqualTo(200);
            await().atMost(T).untilAsserted(() -> {
                for (JsonNode c : status(this, hub, token).values()) {
                    assertThat(idle(c, "t2")).as(c.get("id").asText() + " idle t2").isEqualTo(2);
                }
            });
            assertThat(manage(hub, token, "DELETE", "/internal/templates/t2", null).status()).isIn(200, 204);
            await().atMost(T).untilAsserted(() -> {
                for (JsonNode c : status(this, hub, token).values()) {
                    assertThat(c.get("pools").findValuesAsText("template")).as(c.get("id").asText()).doesNotContain("t2");
                }
            });

            // claims spread by capacity: each worker has one idle base sandbox, three creates use all three
            Set<String> clusters = new HashSet<>();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ids.add(create(hub, admin, "base"));
                clusters.add(SandboxIds.clusterOf(ids.get(i)));
            }
            assertThat(clusters).containsExactlyInAnyOrder("w1", "w2", "w3");
            for (String id : ids) {
                kill(hub, admin, id);
            }
            // CLUSTER::TEMPLATE pins the cluster whatever the capacity says
            for (int i = 0; i < 2; i++) {
                String pinned = create(hub, admin, "w2::base");
                assertThat(SandboxIds.clusterOf(pinned)).isEqualTo("w2");
                kill(hub, admin, pinned);
            }

            // a killed worker is avoided at once
            separate.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            await().atMost(T).until(() -> !status(this, hub, token).get("w3").get("connected").asBoolean());
            for (int i = 0; i < 4; i++) {
                String id = create(hub, admin, "base");
                assertThat(SandboxIds.clusterOf(id)).isIn("w1", "w2");
                kill(hub, admin, id);
            }
            assertThat(call("POST", hub.apiPort(), "/sandboxes", Map.of("X-API-Key", admin), "{\"templateID\":\"w3::base\"}")
                    .status()).as("pinned to a disconnected cluster").isEqualTo(503);

            // a restarted hub: both workers reconnect and resume from their versions (no new snapshot)
            awaitIdle(hub, token, Set.of("w1", "w2"), 1);
            Map<WorkerAgent, Long> snapshotsBefore = new java.util.HashMap<>();
            workers.forEach(w -> snapshotsBefore.put(w, w.templates().snapshotsApplied() + w.apiKeys().snapshotsApplied()));
            Map<WorkerAgent, List<Template>> templatesBefore = new java.util.HashMap<>();
            workers.forEach(w -> templatesBefore.put(w, w.templates().items()));
            hub.close();
            Hub restarted = startHub(hubDir, tunnelPort);
            current.set(restarted);
            String token2 = Files.readString(hubDir.resolve(HubStore.MANAGER_TOKEN_FILE)).trim();
            await().atMost(T).until(() -> status(this, restarted, token2).get("w1").get("connected").asBoolean()
                    && status(this, restarted, token2).get("w2").get("connected").asBoolean());
            JsonNode k2 = manage(restarted, token2, "POST", "/internal/api-keys", "{\"team\":\"t2\"}").json();
            awaitAcked(restarted, token2, "api-keys", k2.get("resourceVersion").asLong(), Set.of("w1", "w2"));
            for (WorkerAgent w : workers) {
                assertThat(w.templates().items()).isEqualTo(templatesBefore.get(w));
                assertThat(w.apiKeys().get(ApiKeys.hash(k2.get("key").asText()))).isNotNull();
                assertThat(w.templates().snapshotsApplied() + w.apiKeys().snapshotsApplied())
                        .as("resumed, not re-sent as snapshots").isEqualTo(snapshotsBefore.get(w));
            }

            // a restarted worker resyncs from nothing
            workers.remove(1).close();
            WorkerAgent again = WorkerAgent.start(tunnel, "w2", tokens.get("w2"), WorkerDirs.sandboxDataDir(dir.resolve("w2b")));
            workers.add(again);
            again.firstTemplates().get(60, TimeUnit.SECONDS);
            assertThat(again.templates().items()).extracting(Template::getName).containsExactly("base");
            await().atMost(T).until(() -> again.apiKeys().get(ApiKeys.hash(k2.get("key").asText())) != null);
        } finally {
            if (separate != null) {
                separate.destroyForcibly();
            }
            workers.forEach(WorkerAgent::close);
            current.get().close();
        }
    }

    private void awaitAcked(Hub hub, String token, String watch, long version, Set<String> clusters) {
        await().atMost(T).untilAsserted(() -> {
            Map<String, JsonNode> s = status(this, hub, token);
            for (String c : clusters) {
                JsonNode acked = s.get(c).get("acknowledgedResourceVersions");
                assertThat(acked.path(watch).asLong()).as("%s acknowledged %s", c, watch).isGreaterThanOrEqualTo(version);
            }
        });
    }

}
