package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.awaitility.Awaitility;
import picocli.CommandLine;

/**
 * Snapshots, fork and reset with the unmodified E2B JS SDK (2.51.0 and 2.50.0, whose create is the
 * v1 {@code POST /sandboxes}) against {@code agentbox
 * standalone} on {@code base} (real crun sandboxes, the worker's image store, the template watch
 * bringing each snapshot's template to the worker): runs {@code src/test/e2e/e2b-snapshots.test.mjs}
 * (docs/e2b-wire.md#templates-lifecycle-and-snapshots items 18–22 and 24, plus reset over HTTP).
 */
class StandaloneE2bSnapshotsTest extends StandaloneSdkTestBase {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void snapshotsForkAndResetWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        String key = standalone.hub().newAdminKey().orElseThrow();
        String url = apiUrl();
        String out = E2bAcceptance.run("e2b-snapshots.test.mjs", List.of(18, 19, 20, 21, 22, 24), url, key, sdkPackage, version,
                java.util.Map.of("E2B_TEMPLATE", "base"), 400, dir.resolve("node-snapshots-" + sdkPackage + ".log"));
        assertThat(out).contains("✔ reset over HTTP");
    }

    static HttpResponse<String> call(String method, String url, String header, String value, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).header(header, value)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A snapshot's warm pool set on the management API fills on the worker that holds it and a
     * create from the snapshot claims from it; {@code agentbox reset} resets sandboxes by id.
     */
    @Test
    void aSnapshotPoolFromTheManagementApiAndTheResetCommand() throws Exception {
        String key = standalone.hub().newAdminKey().orElseThrow();
        String api = apiUrl();
        String mgmt = "http://127.0.0.1:" + standalone.hub().managementPort();
        String token = standalone.hub().newManagerToken().orElseThrow();
        JsonNode sbx = Json.MAPPER.readTree(call("POST", api + "/v2/sandboxes", "X-API-Key", key, "{\"templateID\":\"base\"}").body());
        String id = sbx.get("sandboxID").asText();
        HttpResponse<String> snap = call("POST", api + "/sandboxes/" + id + "/snapshots", "X-API-Key", key, "{\"name\":\"pooled\"}");
        assertThat(snap.statusCode()).as(snap.body()).isEqualTo(201);
        String snapshotId = Json.MAPPER.readTree(snap.body()).get("snapshotID").asText();
        String encoded = java.net.URLEncoder.encode(snapshotId, java.nio.charset.StandardCharsets.UTF_8);

        HttpResponse<String> put = call("PUT", mgmt + "/internal/snapshots/" + encoded, "Authorization", "Bearer " + token,
                "{\"poolSize\":2}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        JsonNode info = Json.MAPPER.readTree(put.body());
        assertThat(info.get("poolSize").asInt()).isEqualTo(2);
        assertThat(info.get("clusterID").asText()).isEqualTo(Standalone.CLUSTER_ID);
        String template = info.get("template").asText();
        assertThat(call("PUT", mgmt + "/internal/snapshots/nope%3Adefault", "Authorization", "Bearer " + token,
                "{\"poolSize\":1}").statusCode()).isEqualTo(404);
        assertThat(call("DELETE", mgmt + "/internal/templates/" + template, "Authorization", "Bearer " + token, null)
                .statusCode()).as("the serving template changes only through the snapshot").isEqualTo(409);
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> standalone.worker().host().pools().capacity().stream()
                .anyMatch(p -> p.getTemplate().equals(template) && p.getIdle() == 2));
        HttpResponse<String> fromPool = call("POST", api + "/v2/sandboxes", "X-API-Key", key,
                "{\"templateID\":\"" + snapshotId + "\"}");
        assertThat(fromPool.statusCode()).as(fromPool.body()).isEqualTo(201);
        assertThat(standalone.worker().host().pools().capacity().stream().filter(p -> p.getTemplate().equals(template))
                .findFirst().orElseThrow().getRunning()).as("claimed from the warm pool").isEqualTo(1);

        // agentbox reset, by id, with --url and --api-key
        java.io.StringWriter cliOut = new java.io.StringWriter();
        java.io.StringWriter cliErr = new java.io.StringWriter();
        CommandLine cli = new CommandLine(new io.agentbox.manager.cli.AgentboxCommand());
        cli.setOut(new java.io.PrintWriter(cliOut));
        cli.setErr(new java.io.PrintWriter(cliErr));
        int code = cli.execute("reset", "--url", api, "--api-key", key, id, "nope");
        assertThat(code).as(cliErr.toString()).isEqualTo(1);
        assertThat(cliOut.toString()).startsWith(id + " reset in ");
        assertThat(cliErr.toString()).contains("nope: 404 sandbox nope not found");
    }
}
