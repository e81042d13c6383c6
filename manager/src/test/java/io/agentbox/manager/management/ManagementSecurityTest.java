package io.agentbox.manager.management;

import static io.agentbox.manager.management.ManagementApiTest.assertError;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.e2b.E2bControlHandler;
import io.agentbox.manager.management.ManagementClient.Res;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12 §5 on a real hub (H2 store) over HTTP: the built-in template cannot be deleted, team
 * quotas are set on the management API and enforced on the public API with 429 (no worker is
 * connected, so an admitted create answers 503: quotas are checked before routing), and
 * {@code /agentbox/metrics} shows a team only its own figures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagementSecurityTest {
    Hub hub;
    ManagementClient api;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        hub = Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0), null);
        api = new ManagementClient(hub.managementPort(), hub.newManagerToken().orElseThrow());
    }

    @AfterAll
    void stop() {
        hub.close();
    }

    String key(String team) throws Exception {
        Res r = api.call("POST", "/internal/api-keys", "{\"team\":\"" + team + "\"}");
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.json().get("key").asText();
    }

    HttpResponse<String> publicCall(String method, String path, String apiKey) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.apiPort() + path))
                .header(E2bControlHandler.API_KEY_HEADER, apiKey).header("Content-Type", "application/json")
                .method(method, "POST".equals(method) ? HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\"}")
                        : HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theBuiltInBaseTemplateCannotBeDeleted() throws Exception {
        assertError(api.call("DELETE", "/internal/templates/base", null), 409, "built in");
        assertThat(api.get("/internal/templates/base").status()).isEqualTo(200);
    }

    @Test
    void limitsAreSetPerTeamWithDefaultsAndCheckedField() throws Exception {
        key("lim-a");
        Res defaults = api.get("/internal/limits");
        assertThat(defaults.status()).isEqualTo(200);
        assertThat(defaults.json().get("maxSandboxes").isNull()).isTrue();
        assertThat(defaults.json().get("createsPerSecond").isNull()).isTrue();

        assertError(api.call("PUT", "/internal/teams/nobody/limits", "{\"maxSandboxes\":1}"), 404, "team 'nobody' not found");
        assertError(api.call("PUT", "/internal/teams/lim-a/limits", "{\"maxSandboxes\":-1}"), 400, "maxSandboxes");
        assertError(api.call("PUT", "/internal/teams/lim-a/limits", "{\"createsPerSecond\":0}"), 400, "createsPerSecond");
        assertError(api.call("PUT", "/internal/teams/lim-a/limits", "{\"maxSandboxes\":\"3\"}"), 400, "maxSandboxes");
        assertError(api.call("PUT", "/internal/teams/lim-a/limits", "{\"max\":3}"), 400, "unknown field 'max'");

        Res set = api.call("PUT", "/internal/teams/lim-a/limits", "{\"maxSandboxes\":7}");
        assertThat(set.status()).as(set.text()).isEqualTo(200);
        assertThat(set.json().get("maxSandboxes").asInt()).isEqualTo(7);
        assertThat(set.json().get("effective").get("createsPerSecond").isNull()).isTrue();
        long version = set.json().get("resourceVersion").asLong();

        Res newDefaults = api.call("PUT", "/internal/limits", "{\"maxSandboxes\":50,\"createsPerSecond\":2.5}");
        assertThat(newDefaults.status()).as(newDefaults.text()).isEqualTo(200);
        assertThat(newDefaults.json().get("resourceVersion").asLong()).isGreaterThan(version);
        Res team = api.get("/internal/teams/lim-a/limits");
        assertThat(team.json().get("effective").get("maxSandboxes").asInt()).isEqualTo(7);
        assertThat(team.json().get("effective").get("createsPerSecond").asDouble()).isEqualTo(2.5);
        assertThat(team.json().get("createsPerSecond").isNull()).isTrue();
        assertThat(api.call("PUT", "/internal/limits", "{}").json().get("maxSandboxes").isNull()).isTrue();
        assertError(api.withToken(null).get("/internal/limits"), 401, "missing manager token");
    }

    @Test
    void aTeamPastItsLimitGets429AndOtherTeamsAreUnaffected() throws Exception {
        String a = key("flood-a");
        String b = key("flood-b");
        assertThat(api.call("PUT", "/internal/teams/flood-a/limits", "{\"createsPerSecond\":0.01}").status()).isEqualTo(200);

        // team A floods with 40 concurrent creates while team B creates too
        List<CompletableFuture<HttpResponse<String>>> fromA = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> fromB = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            fromA.add(CompletableFuture.supplyAsync(() -> send(a)));
            if (i % 4 == 0) {
                fromB.add(CompletableFuture.supplyAsync(() -> send(b)));
            }
        }
        int limited = 0;
        int admitted = 0;
        for (CompletableFuture<HttpResponse<String>> f : fromA) {
            HttpResponse<String> r = f.join();
            if (r.statusCode() == 429) {
                limited++;
                assertThat(r.body()).contains("team 'flood-a'", "createsPerSecond", "\"code\":429");
            } else {
                admitted++;
                assertThat(r.statusCode()).as(r.body()).isEqualTo(503); // admitted, then no worker connected
            }
        }
        assertThat(admitted).isEqualTo(1);
        assertThat(limited).isEqualTo(39);
        for (CompletableFuture<HttpResponse<String>> f : fromB) {
            assertThat(f.join().statusCode()).as(f.join().body()).isEqualTo(503);
        }

        // a sandbox limit of 0 stops the team's creates; the message names the limit
        assertThat(api.call("PUT", "/internal/teams/flood-b/limits", "{\"maxSandboxes\":0}").status()).isEqualTo(200);
        HttpResponse<String> stopped = send(b);
        assertThat(stopped.statusCode()).isEqualTo(429);
        assertThat(stopped.body()).contains("team 'flood-b'", "its limit is 0 (maxSandboxes)");

        // metrics: a team sees its own figures only, an admin key every team's
        String mine = publicCall("GET", E2bControlHandler.METRICS_PATH, a).body();
        assertThat(mine).contains("agentbox_sandboxes_limited_total{limit=\"createsPerSecond\",team=\"flood-a\"} 39.0")
                .doesNotContain("flood-b");
        String admin = publicCall("GET", E2bControlHandler.METRICS_PATH, hub.newAdminKey().orElseThrow()).body();
        assertThat(admin).contains("team=\"flood-a\"", "agentbox_sandboxes_limited_total{limit=\"maxSandboxes\",team=\"flood-b\"} 1.0");
    }

    private HttpResponse<String> send(String key) {
        try {
            return publicCall("POST", "/sandboxes", key);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
