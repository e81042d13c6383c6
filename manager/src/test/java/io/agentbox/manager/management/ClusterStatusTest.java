package io.agentbox.manager.management;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.management.ManagementClient.Res;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster registered through the management API dials the hub with its token: the tunnel accepts
 * it (and refuses a wrong token), {@code /internal/clusters/status} shows it connected with the
 * pools it reports and its count of live sandboxes, and a template created through the API becomes
 * a pool on it.
 */
class ClusterStatusTest {
    @Test
    void registeredClusterConnectsWithItsTokenAndShowsUpInStatus(@TempDir Path dir) throws Exception {
        try (Hub hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0), null)) {
            ManagementClient api = new ManagementClient(hub.managementPort(), hub.newManagerToken().orElseThrow());
            // one warm sandbox is enough to see a pool report
            assertThat(api.call("PUT", "/internal/templates/base", "{\"poolSize\":1}").status()).isEqualTo(200);
            String token = api.call("POST", "/internal/clusters", "{\"id\":\"edge-1\"}").json().get("token").asText();
            URI tunnel = URI.create("ws://127.0.0.1:" + hub.tunnelPort() + TunnelProtocol.PATH);

            assertThatThrownBy(() -> HttpClient.newHttpClient().newWebSocketBuilder()
                    .header(TunnelProtocol.CLUSTER_ID_HEADER, "edge-1")
                    .header(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + "0".repeat(64))
                    .buildAsync(tunnel, new WebSocket.Listener() {}).join())
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(WebSocketHandshakeException.class);

            try (WorkerAgent worker = WorkerAgent.start(tunnel, "edge-1", token, WorkerDirs.sandboxDataDir(dir.resolve("worker")))) {
                worker.firstTemplates().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode edge = cluster(api.get("/internal/clusters/status"), "edge-1");
                    assertThat(edge.get("connected").asBoolean()).isTrue();
                    assertThat(edge.get("pools").findValuesAsText("template")).contains("base");
                });
                JsonNode edge = cluster(api.get("/internal/clusters/status"), "edge-1");
                assertThat(edge.get("registered").asBoolean()).isTrue();
                assertThat(edge.get("connectedSince").isTextual()).isTrue();
                assertThat(edge.get("lastSeen").isTextual()).isTrue();
                assertThat(edge.get("acknowledgedResourceVersions").isObject()).isTrue();
                JsonNode base = edge.get("pools").get(0);
                assertThat(base.has("idle") && base.has("running") && base.has("capacity")).isTrue();
                assertThat(api.get("/metrics").text()).contains("agentbox_clusters_connected 1.0");

                // a template created through the management API reaches the connected worker, which builds its pool
                // and acknowledges the template watch at that template's resource version
                Res created = api.call("POST", "/internal/templates", "{\"name\":\"extra\",\"poolSize\":1}");
                assertThat(created.status()).isEqualTo(201);
                long extraVersion = created.json().get("resourceVersion").asLong();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode now = cluster(api.get("/internal/clusters/status"), "edge-1");
                    assertThat(now.get("pools").findValuesAsText("template")).contains("base", "extra");
                    assertThat(now.get("acknowledgedResourceVersions").get("templates").asLong()).isEqualTo(extraVersion);
                });

                // the worker's live sandboxes: one warm sandbox per pool, then none of a deleted template's
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode now = cluster(api.get("/internal/clusters/status"), "edge-1");
                    assertThat(now.get("pools").findValuesAsText("idle")).containsExactly("1", "1");
                    assertThat(now.get("sandboxes").asInt()).isEqualTo(2);
                });
                assertThat(api.call("DELETE", "/internal/templates/extra", null).status()).isIn(200, 204);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode now = cluster(api.get("/internal/clusters/status"), "edge-1");
                    assertThat(now.get("pools").findValuesAsText("template")).containsExactly("base");
                    assertThat(now.get("sandboxes").asInt()).isEqualTo(1);
                });

                // API keys reach the worker as hashes and leave it when revoked
                JsonNode key = api.call("POST", "/internal/api-keys", "{\"team\":\"t1\"}").json();
                String hash = io.agentbox.manager.auth.ApiKeys.hash(key.get("key").asText());
                await().atMost(Duration.ofSeconds(30)).until(() -> worker.apiKeys().get(hash) != null);
                assertThat(worker.apiKeys().get(hash).getTeam()).isEqualTo("t1");
                assertThat(api.call("DELETE", "/internal/api-keys/" + key.get("id").asText(), null).status()).isIn(200, 204);
                await().atMost(Duration.ofSeconds(30)).until(() -> worker.apiKeys().get(hash) == null);

                // the cluster's config reaches its worker
                assertThat(api.call("PUT", "/internal/clusters/edge-1/config",
                        "{\"hostAliases\":[{\"ip\":\"10.1.2.3\",\"hostnames\":[\"registry.local\"]}],\"settings\":{\"dns\":\"1.1.1.1\"}}")
                        .status()).isEqualTo(200);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(worker.config().items())
                        .extracting(e -> e.getKey() + "=" + e.getValue())
                        .containsExactly("host-alias/registry.local=10.1.2.3", "setting/dns=1.1.1.1"));
            }
        }
    }

    static JsonNode cluster(Res status, String id) {
        for (JsonNode c : status.json().get("clusters")) {
            if (c.get("id").asText().equals(id)) {
                return c;
            }
        }
        throw new AssertionError("cluster " + id + " missing from " + status.text());
    }
}
