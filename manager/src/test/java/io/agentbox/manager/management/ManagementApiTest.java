package io.agentbox.manager.management;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.e2b.E2bControlHandler;
import io.agentbox.manager.management.ManagementClient.Res;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The management API end to end: a real hub (H2 store) on loopback, called over HTTP. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagementApiTest {
    Hub hub;
    ManagementClient api;
    String token;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        hub = Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0), null);
        token = hub.newManagerToken().orElseThrow();
        assertThat(Files.readString(dir.resolve("manager-token")).trim()).isEqualTo(token);
        api = new ManagementClient(hub.managementPort(), token);
    }

    @AfterAll
    void stop() {
        hub.close();
    }

    /** Status of a public API call made with {@code apiKey}: 200 when the key is valid, 401 when not. */
    int publicApiStatus(String apiKey) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + hub.apiPort() + "/sandboxes"))
                .header(E2bControlHandler.API_KEY_HEADER, apiKey).GET().build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode();
    }

    static void assertError(Res r, int status, String messagePart) {
        assertThat(r.status()).as(r.text()).isEqualTo(status);
        assertThat(r.json().get("code").asInt()).isEqualTo(status);
        assertThat(r.json().get("message").asText()).contains(messagePart);
    }

    @Test
    void pingNeedsNoTokenAndMetricsNeedTheManagerToken() throws Exception {
        ManagementClient anonymous = api.withToken(null);
        Res ping = anonymous.get("/ping");
        assertThat(ping.status()).isEqualTo(200);
        assertThat(ping.json().get("status").asText()).isEqualTo("ok");

        anonymous.get("/internal/templates"); // counted as a 401
        assertError(anonymous.get("/metrics"), 401, "missing manager token");
        assertError(api.withToken("abm_wrong").get("/metrics"), 401, "invalid manager token");
        assertError(api.withToken(hub.newAdminKey().orElseThrow()).get("/metrics"), 401, "invalid manager token");
        Res metrics = api.get("/metrics");
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        assertThat(metrics.text()).contains("agentbox_clusters_connected 0.0", "agentbox_store_resource_version",
                "jvm_memory_used_bytes", "agentbox_management_requests_total{method=\"GET\",route=\"/internal/templates\",status=\"401\"}");
    }

    @Test
    void everyInternalRouteNeedsTheManagerToken() throws Exception {
        assertError(api.withToken(null).get("/internal/api-keys"), 401, "missing manager token");
        assertError(api.withToken("abm_wrong").get("/internal/clusters/status"), 401, "invalid manager token");
        assertError(api.withToken(hub.newAdminKey().orElseThrow()).get("/internal/teams"), 401, "invalid manager token");
        Res bearer = api.withToken(null).send(HttpRequest.newBuilder(URI.create(api.base() + "/internal/teams"))
                .header("Authorization", "Bearer " + token).GET().build());
        assertThat(bearer.status()).isEqualTo(200);
    }

    @Test
    void apiKeysAreShownOnceWorkOnThePublicApiAndStopWorkingWhenRevoked() throws Exception {
        Res created = api.call("POST", "/internal/api-keys", "{\"team\":\"acme\",\"name\":\"ci\",\"expiresAt\":\"2099-01-01T00:00:00Z\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String key = created.json().get("key").asText();
        String id = created.json().get("id").asText();
        assertThat(key).matches("e2b_[0-9a-f]{40}");
        assertThat(created.json().get("role").asText()).isEqualTo("user");
        assertThat(created.json().get("expiresAt").asText()).isEqualTo("2099-01-01T00:00:00Z");
        assertThat(created.json().get("revokedAt").isNull()).isTrue();
        assertThat(publicApiStatus(key)).isEqualTo(200);

        Res listed = api.get("/internal/api-keys?team=acme");
        assertThat(listed.json().get("apiKeys")).hasSize(1);
        assertThat(listed.text()).doesNotContain(key.substring(4));
        assertThat(api.get("/internal/api-keys/" + id).json().get("name").asText()).isEqualTo("ci");
        assertThat(api.get("/internal/teams").json().get("teams").findValuesAsText("name")).contains("acme");

        Res revoked = api.call("DELETE", "/internal/api-keys/" + id, null);
        assertThat(revoked.status()).isEqualTo(200);
        assertThat(revoked.json().get("revokedAt").isNull()).isFalse();
        assertThat(publicApiStatus(key)).isEqualTo(401);
        assertError(api.call("DELETE", "/internal/api-keys/" + id, null), 409, "already revoked");
        assertError(api.call("DELETE", "/internal/api-keys/ffffffffffffffff", null), 404, "not found");
        assertError(api.get("/internal/api-keys/ffffffffffffffff"), 404, "not found");
    }

    @Test
    void badKeyRequestsAreRefusedWithTheField() throws Exception {
        assertError(api.call("POST", "/internal/api-keys", "{}"), 400, "team is required");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":\"acme\",\"role\":\"root\"}"), 400, "role");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":\"acme\",\"tem\":\"x\"}"), 400, "unknown field 'tem'");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":\"acme\",\"expiresAt\":\"tomorrow\"}"), 400, "RFC 3339");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":\"acme\",\"expiresAt\":\"2000-01-01T00:00:00Z\"}"), 400, "future");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":"), 400, "malformed JSON");
        assertError(api.call("POST", "/internal/api-keys", "[1]"), 400, "JSON object");
        assertError(api.call("POST", "/internal/api-keys", "{\"team\":\"" + "x".repeat(ManagementServer.MAX_BODY_BYTES) + "\"}"),
                413, "larger than");
    }

    @Test
    void teamsAreCreatedListedAndDeleted() throws Exception {
        Res created = api.call("POST", "/internal/teams", "{\"name\":\"research\",\"description\":\"R&D\"}");
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.json().get("description").asText()).isEqualTo("R&D");
        assertError(api.call("POST", "/internal/teams", "{\"name\":\"research\"}"), 409, "already exists");
        assertThat(api.call("DELETE", "/internal/teams/research", null).status()).isEqualTo(204);
        assertError(api.call("DELETE", "/internal/teams/research", null), 404, "not found");
    }

    @Test
    void templatesCrudWithResourceVersions() throws Exception {
        Res created = api.call("POST", "/internal/templates",
                "{\"name\":\"python\",\"poolSize\":2,\"network\":\"isolated\",\"envVars\":{\"A\":\"1\"},\"clusters\":[\"eu-1\"]}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        long v1 = created.json().get("resourceVersion").asLong();
        assertThat(created.json().get("runtime").asText()).isEqualTo("local");
        assertThat(created.json().get("defaultTimeoutSeconds").asInt()).isEqualTo(300);
        assertThat(created.json().get("clusters").get(0).asText()).isEqualTo("eu-1");
        assertThat(hub.store().template("python")).isPresent(); // visible to the public API's template lookup
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"python\"}"), 409, "already exists");

        Res updated = api.call("PUT", "/internal/templates/python", "{\"poolSize\":3,\"resourceVersion\":" + v1 + "}");
        assertThat(updated.status()).as(updated.text()).isEqualTo(200);
        long v2 = updated.json().get("resourceVersion").asLong();
        assertThat(v2).isGreaterThan(v1);
        assertThat(updated.json().get("poolSize").asInt()).isEqualTo(3);
        assertError(api.call("PUT", "/internal/templates/python", "{\"poolSize\":4,\"resourceVersion\":" + v1 + "}"), 409, "resource version");
        // the query form is as conditional as the body form (it was ignored: a stale write went through)
        assertError(api.call("PUT", "/internal/templates/python?resourceVersion=" + v1, "{\"poolSize\":4}"), 409, "resource version");
        assertError(api.call("PUT", "/internal/templates/python?resourceVersion=" + v2,
                "{\"poolSize\":4,\"resourceVersion\":" + v1 + "}"), 400, "in the query");
        assertError(api.call("PUT", "/internal/templates/python", "{\"name\":\"other\"}"), 400, "cannot be renamed");
        assertError(api.call("PUT", "/internal/templates/nope", "{}"), 404, "not found");

        assertThat(api.get("/internal/templates").json().get("templates").findValuesAsText("name")).contains("base", "python");
        assertThat(api.get("/internal/templates/python").json().get("poolSize").asInt()).isEqualTo(3);

        assertError(api.call("DELETE", "/internal/templates/python?resourceVersion=" + v1, null), 409, "resource version");
        assertError(api.call("DELETE", "/internal/templates/python?resourceVersion=abc", null), 400, "resourceVersion");
        assertThat(api.call("DELETE", "/internal/templates/python?resourceVersion=" + v2, null).status()).isEqualTo(204);
        assertError(api.get("/internal/templates/python"), 404, "not found");
    }

    @Test
    void badTemplatesAreRefused() throws Exception {
        assertError(api.call("POST", "/internal/templates", "{\"poolSize\":1}"), 400, "name is required");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"poolSize\":\"big\"}"), 400, "poolSize must be an integer");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"poolSize\":-1}"), 400, "poolSize");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"network\":\"bridge\"}"), 400, "network");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"T 1\"}"), 400, "template name");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"envVars\":{\"A\":1}}"), 400, "envVars.A");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"resourceVersion\":3}"), 400, "resourceVersion");
        assertError(api.get("/internal/templates/t1"), 404, "not found");
    }

    @Test
    void templatesCarryANormalisedImageAPidsLimitAndANetwork() throws Exception {
        Res created = api.call("POST", "/internal/templates", "{\"name\":\"py\",\"poolSize\":0,\"image\":\"python:3.12\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        assertThat(created.json().get("image").asText()).isEqualTo("docker.io/library/python:3.12");
        assertThat(created.json().get("pidsLimit").asInt()).isEqualTo(1024);
        assertThat(created.json().get("network").asText()).isEqualTo("isolated");
        // no worker has reported the template: no status, and the message says why
        assertThat(created.json().get("status").isNull()).isTrue();
        assertThat(created.json().get("statusMessage").asText()).contains("no connected cluster");
        assertThat(hub.store().template("py").orElseThrow().getImage()).isEqualTo("docker.io/library/python:3.12");

        String digest = "sha256:" + "0f".repeat(32);
        Res updated = api.call("PUT", "/internal/templates/py", "{\"poolSize\":0,\"image\":\"127.0.0.1:5000/Team/app@"
                .replace("Team", "team") + digest + "\",\"pidsLimit\":64,\"network\":\"none\"}");
        assertThat(updated.status()).as(updated.text()).isEqualTo(200);
        JsonNode got = api.get("/internal/templates/py").json();
        assertThat(got.get("image").asText()).isEqualTo("127.0.0.1:5000/team/app@" + digest);
        assertThat(got.get("pidsLimit").asInt()).isEqualTo(64);
        assertThat(got.get("network").asText()).isEqualTo("none");
        assertThat(api.call("PUT", "/internal/templates/py", "{\"network\":\"host\"}").json().get("network").asText())
                .isEqualTo("host");
        assertThat(api.get("/internal/templates/py").json().get("image").asText()).as("PUT replaces the spec").isEmpty();
        assertError(api.call("PUT", "/internal/templates/py", "{\"image\":\"py@sha256:abc\"}"), 400,
                "image: image reference 'py@sha256:abc': digest must be sha256:");
        assertThat(api.call("DELETE", "/internal/templates/py", null).status()).isEqualTo(204);
    }

    @Test
    void badImagesPidsLimitsAndNetworksAreRefusedNamingTheField() throws Exception {
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"image\":\"Python:3\"}"), 400,
                "image: image reference 'Python:3': invalid repository component 'Python'");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"image\":\"python:bad tag\"}"), 400, "image");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"image\":\"r.io:70000/app\"}"), 400,
                "invalid registry port '70000'");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"image\":7}"), 400, "image must be a string");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"pidsLimit\":0}"), 400,
                "pidsLimit must be between 1 and 65535, got 0");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"pidsLimit\":65536}"), 400, "pidsLimit");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"pidsLimit\":-3}"), 400, "pidsLimit");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"pidsLimit\":\"many\"}"), 400,
                "pidsLimit must be an integer");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"network\":\"bridge\"}"), 400,
                "network must be one of isolated, none, host; got 'bridge'");
        assertError(api.call("POST", "/internal/templates", "{\"name\":\"t1\",\"network\":\"ISOLATED\"}"), 400, "network");
        assertError(api.get("/internal/templates/t1"), 404, "not found");
    }

    @Test
    void registryCredentialsAreValidatedAndTheirPasswordsNeverAnswered() throws Exception {
        assertThat(api.call("POST", "/internal/clusters", "{\"id\":\"creds-1\"}").status()).isEqualTo(201);
        String path = "/internal/clusters/creds-1/config";
        Res put = api.call("PUT", path, "{\"settings\":{\"registry.auth.ghcr.io\":"
                + "\"{\\\"username\\\":\\\"bot\\\",\\\"password\\\":\\\"pw-Secret-1\\\"}\",\"other\":\"x\"}}");
        assertThat(put.status()).as(put.text()).isEqualTo(200);
        assertThat(put.text()).doesNotContain("pw-Secret-1");
        Res got = api.get(path);
        assertThat(got.text()).doesNotContain("pw-Secret-1");
        assertThat(got.json().get("settings").get("registry.auth.ghcr.io").asText()).isEqualTo("{\"username\":\"bot\"}");
        assertThat(got.json().get("settings").get("other").asText()).isEqualTo("x");
        // the worker gets the password: it is in the store
        assertThat(hub.store().clusterStore().get("creds-1").orElseThrow().config().settings().get("registry.auth.ghcr.io"))
                .contains("pw-Secret-1");

        // read-modify-write: the redacted value sent back keeps the stored password
        String body = "{\"settings\":" + got.json().get("settings").toString() + "}";
        assertThat(api.call("PUT", path, body.replace("\"x\"", "\"y\"")).status()).isEqualTo(200);
        assertThat(hub.store().clusterStore().get("creds-1").orElseThrow().config().settings())
                .containsEntry("other", "y").extractingByKey("registry.auth.ghcr.io").asString().contains("pw-Secret-1");
        // a username-only value for another user, or for a registry without stored credentials, is refused
        assertError(api.call("PUT", path, "{\"settings\":{\"registry.auth.ghcr.io\":\"{\\\"username\\\":\\\"eve\\\"}\"}}"),
                400, "settings.registry.auth.ghcr.io: 'password' must be a string");
        assertError(api.call("PUT", path, "{\"settings\":{\"registry.auth.quay.io\":\"{\\\"username\\\":\\\"bot\\\"}\"}}"),
                400, "settings.registry.auth.quay.io");

        // malformed values: 400 naming the setting, never echoing the value
        Res notJson = api.call("PUT", path, "{\"settings\":{\"registry.auth.ghcr.io\":\"bot:pw-Secret-2\"}}");
        assertError(notJson, 400, "settings.registry.auth.ghcr.io: must be a JSON object");
        assertThat(notJson.text()).doesNotContain("pw-Secret-2");
        assertError(api.call("PUT", path, "{\"settings\":{\"registry.auth.no_host\":"
                + "\"{\\\"username\\\":\\\"a\\\",\\\"password\\\":\\\"b\\\"}\"}}"), 400, "must name a registry");
        assertThat(api.get(path).text()).doesNotContain("pw-Secret");
    }

    @Test
    void clustersAreRegisteredWithATokenShownOnceAndCarryAConfig() throws Exception {
        Res registered = api.call("POST", "/internal/clusters", "{\"id\":\"eu-1\",\"description\":\"Frankfurt\"}");
        assertThat(registered.status()).as(registered.text()).isEqualTo(201);
        String clusterToken = registered.json().get("token").asText();
        assertThat(clusterToken).matches("[0-9a-f]{64}");
        assertThat(hub.store().clusterStore().authenticate("eu-1", clusterToken)).isTrue();
        assertThat(api.get("/internal/clusters/eu-1").text()).doesNotContain(clusterToken);
        assertThat(api.get("/internal/clusters").json().get("clusters").findValuesAsText("id")).contains("eu-1");
        assertError(api.call("POST", "/internal/clusters", "{\"id\":\"eu-1\"}"), 409, "already registered");
        assertError(api.call("POST", "/internal/clusters", "{\"id\":\"EU 1\"}"), 400, "invalid cluster id");
        assertError(api.call("POST", "/internal/clusters", "{\"id\":\"status\"}"), 400, "reserved");

        Res config = api.get("/internal/clusters/eu-1/config");
        assertThat(config.json().get("hostAliases")).isEmpty();
        long v = config.json().get("resourceVersion").asLong();
        Res put = api.call("PUT", "/internal/clusters/eu-1/config", "{\"hostAliases\":[{\"ip\":\"10.0.0.5\",\"hostnames\":"
                + "[\"db.internal\"]}],\"settings\":{\"registry\":\"r.internal:5000\"},\"resourceVersion\":" + v + "}");
        assertThat(put.status()).as(put.text()).isEqualTo(200);
        assertThat(put.json().get("hostAliases").get(0).get("hostnames").get(0).asText()).isEqualTo("db.internal");
        assertThat(put.json().get("resourceVersion").asLong()).isGreaterThan(v);
        assertThat(api.get("/internal/clusters/eu-1/config").json().get("settings").get("registry").asText())
                .isEqualTo("r.internal:5000");
        assertError(api.call("PUT", "/internal/clusters/eu-1/config", "{\"resourceVersion\":" + v + "}"), 409, "resource version");
        assertError(api.call("PUT", "/internal/clusters/eu-1/config", "{\"hostAliases\":[{\"ip\":\"nope\",\"hostnames\":[\"a\"]}]}"),
                400, "IPv4 or IPv6");
        assertError(api.call("PUT", "/internal/clusters/eu-1/config", "{\"hostAliases\":{}}"), 400, "hostAliases");
        assertError(api.call("PUT", "/internal/clusters/nope/config", "{}"), 404, "not found");

        Res rotated = api.call("POST", "/internal/clusters/eu-1/token", null);
        assertThat(rotated.status()).isEqualTo(200);
        assertThat(hub.store().clusterStore().authenticate("eu-1", clusterToken)).isFalse();
        assertThat(hub.store().clusterStore().authenticate("eu-1", rotated.json().get("token").asText())).isTrue();

        assertThat(api.call("DELETE", "/internal/clusters/eu-1", null).status()).isEqualTo(204);
        assertError(api.get("/internal/clusters/eu-1"), 404, "not found");
        assertError(api.get("/internal/clusters/eu-1/config"), 404, "not found");
    }

    @Test
    void clusterStatusListsRegisteredClustersWithNullsForWhatHasNoSourceYet() throws Exception {
        api.call("POST", "/internal/clusters", "{\"id\":\"offline-1\"}");
        Res status = api.get("/internal/clusters/status");
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.json().get("resourceVersion").asLong()).isEqualTo(hub.store().changeLog().currentVersion());
        JsonNode offline = null;
        for (JsonNode c : status.json().get("clusters")) {
            if (c.get("id").asText().equals("offline-1")) {
                offline = c;
            }
        }
        assertThat(offline).isNotNull();
        assertThat(offline.get("registered").asBoolean()).isTrue();
        assertThat(offline.get("connected").asBoolean()).isFalse();
        List<String> nullFields = new ArrayList<>();
        offline.fields().forEachRemaining(e -> {
            if (e.getValue().isNull()) {
                nullFields.add(e.getKey());
            }
        });
        assertThat(nullFields).containsExactlyInAnyOrder("connectedSince", "lastSeen", "sandboxes", "acknowledgedResourceVersions", "pools");
    }

    @Test
    void unknownPathsAre404AndWrongMethods405WithAllow() throws Exception {
        assertError(api.get("/internal/nothing"), 404, "no route");
        assertError(api.get("/internal/templates/"), 404, "no route");
        Res wrong = api.call("PATCH", "/internal/templates/base", "{}");
        assertError(wrong, 405, "not allowed");
        assertThat(wrong.raw().headers().firstValue("Allow")).contains("DELETE, GET, PUT");
    }
}
