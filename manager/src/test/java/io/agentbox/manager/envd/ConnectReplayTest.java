package io.agentbox.manager.envd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.testing.ApiUnderTest;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code process.Process/Connect} with envd's {@code replay} field over the hub (the SDK never
 * sends it; without it, only new output: e2b-sdk.test.mjs). Raw Connect frames over HTTP/1.1.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConnectReplayTest {
    ApiUnderTest api;
    JsonNode sbx;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        var created = api.call("POST", "/v2/sandboxes", api.adminKey, "{}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        sbx = Json.MAPPER.readTree(created.body());
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    HttpRequest.Builder envd(String path) {
        return HttpRequest.newBuilder(URI.create(api.base + path))
                .header("E2b-Sandbox-Id", sbx.get("sandboxID").asText())
                .header("X-Access-Token", sbx.get("envdAccessToken").asText())
                .header("Connect-Protocol-Version", "1");
    }

    static byte[] envelope(String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + p.length).put((byte) 0).putInt(p.length).put(p).array();
    }

    HttpResponse<InputStream> stream(String method, String json) throws Exception {
        return http.send(envd("/process.Process/" + method).header("Content-Type", "application/connect+json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope(json))).build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    static JsonNode next(DataInputStream in) throws Exception {
        int flags = in.readUnsignedByte();
        byte[] payload = new byte[in.readInt()];
        in.readFully(payload);
        JsonNode json = Json.MAPPER.readTree(payload);
        return flags == 2 ? Json.MAPPER.createObjectNode().set("eos", json) : json;
    }

    int status(String path) throws Exception {
        return http.send(envd(path).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void replayTrueHandsOverWhatWasPrintedWhileNobodyWasAttached() throws Exception {
        String marker = "/home/user/replay-marker";
        HttpResponse<InputStream> started = stream("Start", "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-c\","
                + "\"sleep 1; for i in 1 2 3 4 5 6; do echo away-$i; sleep 0.2; done; touch " + marker
                + "; read l; echo live-$l\"]},\"stdin\":true}");
        int pid;
        try (DataInputStream in = new DataInputStream(started.body())) {
            pid = next(in).at("/event/start/pid").asInt();
        } // the client leaves before any output
        assertThat(pid).isPositive();
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> status("/files?path=" + marker) == 200);
        Thread.sleep(300); // read from the pipe by the worker

        HttpResponse<InputStream> attached = stream("Connect", "{\"process\":{\"pid\":" + pid + "},\"replay\":true}");
        assertThat(attached.statusCode()).isEqualTo(200);
        StringBuilder out = new StringBuilder();
        List<JsonNode> frames = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(attached.body())) {
            assertThat(next(in).at("/event/start/pid").asInt()).isEqualTo(pid);
            var input = http.send(envd("/process.Process/SendInput").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"process\":{\"pid\":" + pid + "},\"input\":{\"stdin\":\""
                            + Base64.getEncoder().encodeToString("x\n".getBytes(StandardCharsets.UTF_8)) + "\"}}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(input.statusCode()).as(input.body()).isEqualTo(200);
            while (true) {
                JsonNode f;
                try {
                    f = next(in);
                } catch (EOFException e) {
                    break;
                }
                frames.add(f);
                JsonNode data = f.at("/event/data/stdout");
                if (!data.isMissingNode()) {
                    out.append(new String(Base64.getDecoder().decode(data.asText()), StandardCharsets.UTF_8));
                }
            }
        }
        // the hub drops what it had in flight when it notices the first client left; the rest was kept
        assertThat(out.toString()).contains("away-6\n").endsWith("away-6\nlive-x\n");
        assertThat(frames.get(frames.size() - 1).has("eos")).isTrue();
    }

    @Test
    void replayMustBeABoolean() throws Exception {
        HttpResponse<InputStream> r = stream("Connect", "{\"process\":{\"pid\":1},\"replay\":\"yes\"}");
        try (DataInputStream in = new DataInputStream(r.body())) {
            JsonNode eos = next(in);
            assertThat(eos.at("/eos/error/code").asText()).isEqualTo("invalid_argument");
            assertThat(eos.at("/eos/error/message").asText()).contains("replay");
        }
    }
}
