package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Pause, resume, the create-time lifecycle and metrics with the unmodified E2B JS SDK against
 * {@code agentbox standalone} on real crun sandboxes: {@code src/test/e2e/e2b-pause.test.mjs}
 * (items 10–17 and 23 of docs/e2b-wire.md#templates-lifecycle-and-snapshots), once with SDK 2.51.0 and once with
 * 2.50.0 (v1 connect path, pause body {@code {"memory":true}}). Fails (never skips) when Node.js
 * or the SDKs are missing: {@code deploy/bin/test-all} installs them.
 */
class StandalonePauseSdkTest extends StandaloneSdkTestBase {
    /** Numbered items of the acceptance outline the file covers. */
    static final List<Integer> ITEMS = List.of(10, 11, 12, 13, 14, 15, 16, 17, 23);

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    static HttpResponse<String> call(String method, String path, Map<String, String> headers, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(apiUrl() + path)).timeout(Duration.ofSeconds(60))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(b::header);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Pause, connect and reset of one sandbox sent at the same moment, round after round: the
     * worker runs them one after the other, so each answers what E2B would for the state the
     * others left (pause 204 or 409, connect 200 or 201, reset 200 or 409 while paused) and no
     * answer is a 5xx naming a host path (before: a reset swapping the container under a freeze
     * gave 503 with the cgroup's path).
     */
    @Test
    void concurrentPauseConnectAndResetAreSerializedPerSandbox() throws Exception {
        Map<String, String> key = Map.of("X-API-Key", standalone.hub().newAdminKey().orElseThrow(),
                "Content-Type", "application/json");
        HttpResponse<String> created = call("POST", "/v2/sandboxes", key, "{\"templateID\":\"base\",\"timeout\":300}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode sbx = Json.MAPPER.readTree(created.body());
        String id = sbx.get("sandboxID").asText();
        Map<String, Set<Integer>> allowed = Map.of(
                "POST /sandboxes/" + id + "/pause", Set.of(204, 409),
                "POST /v2/sandboxes/" + id + "/connect", Set.of(200, 201),
                "POST /v1/sandboxes/" + id + "/reset", Set.of(200, 409));
        List<String> ops = new ArrayList<>(allowed.keySet());
        ExecutorService pool = Executors.newFixedThreadPool(ops.size());
        try {
            for (int round = 0; round < 60; round++) {
                CyclicBarrier together = new CyclicBarrier(ops.size());
                List<Future<HttpResponse<String>>> answers = new ArrayList<>();
                for (String op : ops) {
                    String[] mp = op.split(" ", 2);
                    answers.add(pool.submit(() -> {
                        together.await();
                        Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(40)); // land inside each other
                        return call(mp[0], mp[1], key, "{}");
                    }));
                }
                for (int i = 0; i < ops.size(); i++) {
                    HttpResponse<String> a = answers.get(i).get();
                    String what = "round " + round + ": " + ops.get(i) + " -> " + a.statusCode() + " " + a.body();
                    assertThat(allowed.get(ops.get(i))).as(what).contains(a.statusCode());
                    assertThat(a.body()).as(what).doesNotContain("/sys/", "cgroup");
                }
                HttpResponse<String> back = call("POST", "/v2/sandboxes/" + id + "/connect", key, "{}");
                assertThat(back.statusCode()).as(back.body()).isIn(200, 201);
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, String> envd = Map.of("E2b-Sandbox-Id", id, "X-Access-Token", sbx.path("envdAccessToken").asText());
        assertThat(call("GET", "/health", envd, null).statusCode()).as("running after the last connect").isEqualTo(204);

        // envd on a paused sandbox answers as E2B's proxy does for one that is not running: 502
        assertThat(call("POST", "/sandboxes/" + id + "/pause", key, "{}").statusCode()).isEqualTo(204);
        Map<String, String> upload = new java.util.HashMap<>(envd);
        upload.put("Content-Type", "application/octet-stream");
        HttpResponse<String> write = call("POST", "/files?path=%2Fhome%2Fuser%2Fp.txt", upload, "while paused");
        assertThat(write.statusCode()).as(write.body()).isEqualTo(502);
        assertThat(Json.MAPPER.readTree(write.body()).get("code").asInt()).isEqualTo(502);
        HttpResponse<String> read = call("GET", "/files?path=%2Fhome%2Fuser%2Fp.txt", envd, null);
        assertThat(read.statusCode()).as(read.body()).isEqualTo(502);
        assertThat(call("DELETE", "/sandboxes/" + id, key, null).statusCode()).isEqualTo(204);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void pauseResumeLifecycleAndMetricsWorkWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        E2bAcceptance.run("e2b-pause.test.mjs", ITEMS, apiUrl(),
                standalone.hub().newAdminKey().orElseThrow(), sdkPackage, version, Map.of(), 300,
                dir.resolve("node-pause-" + sdkPackage + ".log"));
    }
}
