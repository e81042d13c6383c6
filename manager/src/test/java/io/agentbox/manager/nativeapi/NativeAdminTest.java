package io.agentbox.manager.nativeapi;

import static io.agentbox.manager.nativeapi.NativeSandboxesTest.assertEnvelope;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.nativeapi.V1Client.Res;
import io.agentbox.manager.testing.HubWithClusters;
import io.agentbox.manager.workerapi.WorkerApi;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin routes {@code /v1/clusters} and {@code /v1/keys} on a real hub with a worker cluster
 * joined over its tunnel; a non-admin key is refused, a worker's local API answers 501.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeAdminTest {
    HubWithClusters hub;
    V1Client v1;
    String admin;
    String alice;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        hub = HubWithClusters.start(dir);
        hub.join("edge-1");
        v1 = new V1Client("http://127.0.0.1:" + hub.hub().apiPort());
        admin = hub.key().get("X-API-Key");
        alice = hub.hub().store().createApiKey("alice", "user");
    }

    @AfterAll
    void stop() {
        hub.close();
    }

    @Test
    void clustersShowTheConnectedClusterWithItsPools() throws Exception {
        await().atMost(HubWithClusters.T).untilAsserted(() -> {
            JsonNode edge = v1.call("GET", "/v1/clusters/edge-1", admin, null).json();
            assertThat(edge.get("pools").findValuesAsText("template")).contains("base");
        });
        Res list = v1.call("GET", "/v1/clusters", admin, null);
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json().get("items")).extracting(n -> n.get("id").asText()).containsExactly("edge-1");
        JsonNode edge = list.json().get("items").get(0);
        assertThat(edge.get("registered").asBoolean()).isTrue();
        assertThat(edge.get("connected").asBoolean()).isTrue();
        assertThat(edge.get("lastSeenAt").asText()).endsWith("Z");
        assertThat(edge.get("runtime").asText()).isEqualTo("local");
        JsonNode base = edge.get("pools").get(0);
        assertThat(base.get("template").asText()).isEqualTo("base");
        assertThat(base.get("pullStatus").asText()).isIn("ready", "pulling", "error");
        assertThat(base.get("target").asInt()).isEqualTo(hub.hub().store().template("base").orElseThrow().getPoolSize());
        assertThat(base.get("capacity").asInt()).isGreaterThanOrEqualTo(base.get("idle").asInt() + base.get("running").asInt());
        assertThat(edge.get("capacity").asLong()).isGreaterThanOrEqualTo(edge.get("sandboxes").asLong());

        assertEnvelope(v1.call("GET", "/v1/clusters/nope", admin, null), 404, "not_found");
        assertEnvelope(v1.call("GET", "/v1/clusters", alice, null), 403, "forbidden");
        assertEnvelope(v1.call("GET", "/v1/clusters/edge-1", alice, null), 403, "forbidden");
    }

    @Test
    void keysAreCreatedShownOnceListedAndRevoked() throws Exception {
        Res made = v1.call("POST", "/v1/keys", admin, "{\"name\":\"ci\",\"team\":\"carol\"}");
        assertThat(made.status()).as(made.text()).isEqualTo(201);
        String id = made.json().get("id").asText();
        String key = made.json().get("key").asText();
        assertThat(made.json().get("role").asText()).isEqualTo("user");
        assertThat(made.json().get("team").asText()).isEqualTo("carol");
        // the new key works on the hub's API at once
        assertThat(v1.call("GET", "/v1/sandboxes", key, null).status()).isEqualTo(200);

        Res listed = v1.call("GET", "/v1/keys?team=carol", admin, null);
        assertThat(listed.json().get("items")).extracting(n -> n.get("id").asText()).containsExactly(id);
        assertThat(listed.json().get("items").get(0).has("key")).as("the key is shown at create only").isFalse();
        assertThat(listed.json().get("items").get(0).get("name").asText()).isEqualTo("ci");

        assertEnvelope(v1.call("GET", "/v1/keys", alice, null), 403, "forbidden");
        assertEnvelope(v1.call("POST", "/v1/keys", alice, "{\"team\":\"alice\"}"), 403, "forbidden");
        assertEnvelope(v1.call("DELETE", "/v1/keys/" + id, alice, null), 403, "forbidden");
        assertEnvelope(v1.call("POST", "/v1/keys", admin, "{\"name\":\"x\"}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/keys", admin, "{\"team\":\"t\",\"role\":\"root\"}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/keys", admin, "{\"team\":\"t\",\"colour\":1}"), 400, "bad_request");

        assertThat(v1.call("DELETE", "/v1/keys/" + id, admin, null).status()).isEqualTo(204);
        assertEnvelope(v1.call("GET", "/v1/sandboxes", key, null), 401, "unauthorized");
        assertThat(v1.call("GET", "/v1/keys?team=carol", admin, null).json().get("items").get(0).get("revokedAt").asText())
                .endsWith("Z");
        assertEnvelope(v1.call("DELETE", "/v1/keys/" + id, admin, null), 409, "conflict");
        assertEnvelope(v1.call("DELETE", "/v1/keys/0000000000000000", admin, null), 404, "not_found");
    }

    @Test
    void aWorkersLocalApiAnswers501ForAdminRoutes() throws Exception {
        await().atMost(HubWithClusters.T).until(() -> hub.worker("edge-1").apiKeys().get(ApiKeys.hash(alice)) != null
                && hub.worker("edge-1").apiKeys().get(ApiKeys.hash(admin)) != null);
        try (WorkerApi local = WorkerApi.start(hub.worker("edge-1"), "127.0.0.1", 0)) {
            V1Client w = new V1Client("http://127.0.0.1:" + local.port());
            assertEnvelope(w.call("GET", "/v1/clusters", admin, null), 501, "not_implemented");
            assertEnvelope(w.call("GET", "/v1/keys", admin, null), 501, "not_implemented");
            assertEnvelope(w.call("GET", "/v1/keys", alice, null), 403, "forbidden");
        }
    }
}
