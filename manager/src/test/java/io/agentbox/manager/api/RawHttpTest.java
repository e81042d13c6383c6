package io.agentbox.manager.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.testing.ApiUnderTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * What only a raw socket shows: the bytes of the request line and the fate of the connection.
 * An error answered before the body was read must still reach a client that sends its whole
 * body first (what fetch does), and a percent-encoded slash in a path is a character of its
 * segment, not a separator and not a reason for a bare 400.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RawHttpTest {
    ApiUnderTest api;
    JsonNode sandbox;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        var created = api.call("POST", "/v2/sandboxes", api.adminKey, "{}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        sandbox = Json.MAPPER.readTree(created.body());
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    /** One parsed HTTP/1.1 response (Content-Length bodies only: all our errors have one). */
    record Answer(int status, Map<String, String> headers, String body) {
        JsonNode json() throws IOException {
            return Json.MAPPER.readTree(body);
        }
    }

    static Answer read(InputStream in) throws IOException {
        String statusLine = line(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = line(in); !h.isEmpty(); h = line(in)) {
            int colon = h.indexOf(':');
            headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
        }
        byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("connection closed mid-response after: " + b);
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", api.server.port());
        s.setSoTimeout(30_000);
        return s;
    }

    @Test
    void postToASignedDownloadUrlWithRoutingHeadersGets401AfterItsWholeBody() throws Exception {
        String id = sandbox.get("sandboxID").asText();
        // a downloadUrl() signature used for a POST: signed for "read", so not valid for "write"
        String target = "/files?path=%2Fhome%2Fuser%2Fx.txt&signature=v1_bogus&signature_expiration=9999999999";
        int bodyBytes = 8 << 20; // far more than the socket buffers hold
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: " + id
                    + "\r\nE2b-Sandbox-Port: 49983\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                    + bodyBytes + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            for (int sent = 0; sent < bodyBytes; sent += chunk.length) {
                out.write(chunk); // before the fix: "Broken pipe" / "Connection reset" here
            }
            out.flush();
            Answer a = read(s.getInputStream());
            assertThat(a.status()).as(a.body()).isEqualTo(401);
            assertThat(a.json().get("code").asInt()).isEqualTo(401);
            assertThat(a.json().get("message").asText()).contains("signature");
            // the connection is still usable: the next request on it is answered
            out.write(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: " + id + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(read(s.getInputStream()).status()).isEqualTo(204);
        }
    }

    @Test
    void aBodyTooLargeToDrainIsRefusedWithConnectionClose() throws Exception {
        String id = sandbox.get("sandboxID").asText();
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /files?path=%2Fhome%2Fuser%2Fx.txt&signature=v1_bogus HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "E2b-Sandbox-Id: " + id + "\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                    + (HttpIo.MAX_DRAIN + 1) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Answer a = read(s.getInputStream()); // a client that reads before it sends sees why
            assertThat(a.status()).isEqualTo(401);
            assertThat(a.headers().get("connection")).isEqualToIgnoringCase("close");
        }
    }

    /** The sandbox's envd access token, null when it has none. */
    String accessToken() {
        JsonNode token = sandbox.get("envdAccessToken");
        return token == null || token.isNull() ? null : token.asText();
    }

    /** The envd data plane: {@code method} on {@code target} with {@code headers} and {@code body} as is. */
    Answer envd(String method, String target, String headers, byte[] body) throws IOException {
        String token = accessToken();
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write((method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: "
                    + sandbox.get("sandboxID").asText() + "\r\nE2b-Sandbox-Port: 49983\r\n"
                    + (token == null ? "" : "X-Access-Token: " + token + "\r\n")
                    + headers + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return read(s.getInputStream());
        }
    }

    /** A plain upload whose Content-Length is over the limit is refused before the file is touched. */
    @Test
    void anUploadDeclaredLargerThanTheLimitLeavesTheFileAsItWas() throws Exception {
        String target = "/files?path=%2Fhome%2Fuser%2Fkeep.txt";
        Answer put = envd("POST", target, "Content-Type: application/octet-stream\r\nContent-Length: 3\r\n",
                "old".getBytes(StandardCharsets.US_ASCII));
        assertThat(put.status()).as(put.body()).isEqualTo(200);

        long limit = Limits.DEFAULT.uploadBody();
        Answer big = envd("POST", target, "Content-Type: application/octet-stream\r\nContent-Length: " + (limit + 1) + "\r\n",
                "new bytes, far fewer than declared".getBytes(StandardCharsets.US_ASCII));
        assertThat(big.status()).as(big.body()).isEqualTo(413);
        assertThat(big.json().get("message").asText()).contains("larger than " + limit + " bytes");

        HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.server.port() + target))
                .header("E2b-Sandbox-Id", sandbox.get("sandboxID").asText()).header("E2b-Sandbox-Port", "49983");
        if (accessToken() != null) {
            get.header("X-Access-Token", accessToken());
        }
        HttpResponse<String> kept = HttpClient.newHttpClient().send(get.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(kept.statusCode()).isEqualTo(200);
        assertThat(kept.body()).isEqualTo("old");
    }

    /**
     * A client that stops reading a download and resets the connection is not a server failure:
     * the hub notes it at DEBUG in one line instead of a WARN with Jetty's stack trace, and serves
     * the next request.
     */
    @Test
    void aDownloadTheClientHangsUpOnIsNoServerFailure() throws Exception {
        String target = "/files?path=%2Fhome%2Fuser%2Fbig.bin";
        byte[] big = new byte[32 << 20];
        new Random(7).nextBytes(big);
        Answer put = envd("POST", target, "Content-Type: application/octet-stream\r\nContent-Length: " + big.length + "\r\n", big);
        assertThat(put.status()).as(put.body()).isEqualTo(200);

        Logger handlerLog = (Logger) LoggerFactory.getLogger(ApiHandler.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Level level = handlerLog.getLevel();
        handlerLog.setLevel(Level.DEBUG);
        handlerLog.addAppender(logs);
        try {
            String token = accessToken();
            Socket s = connect();
            s.getOutputStream().write(("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nE2b-Sandbox-Id: "
                    + sandbox.get("sandboxID").asText() + "\r\nE2b-Sandbox-Port: 49983\r\n"
                    + (token == null ? "" : "X-Access-Token: " + token + "\r\n") + "\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertThat(s.getInputStream().readNBytes(4096)).hasSize(4096); // the download has begun
            s.setSoLinger(true, 0); // close with a reset, as a killed client does
            s.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> logs.list.stream()
                    .anyMatch(e -> e.getFormattedMessage().contains("GET /files: the client closed the connection")));
            assertThat(logs.list).as("no WARN for a client that went away")
                    .noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
        } finally {
            handlerLog.detachAppender(logs);
            handlerLog.setLevel(level);
        }
        Answer after = envd("GET", "/files?path=%2Fhome%2Fuser%2Fkeep-going.txt", "", new byte[0]);
        assertThat(after.status()).as("the hub goes on serving: %s", after.body()).isEqualTo(404);
    }

    Answer get(String path) throws IOException {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + api.adminKey
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return read(s.getInputStream());
        }
    }

    Answer send(String method, String path) throws IOException {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + api.adminKey
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return read(s.getInputStream());
        }
    }

    /** Encoded dot segments reach no route as a path to walk, and the refusal has E2B's JSON body. */
    @Test
    void encodedDotSegmentsGetAJsonError() throws Exception {
        for (String path : new String[] {"/templates/%2e%2e", "/templates/%2E%2E", "/templates/%2e", "/templates/.%2e"}) {
            Answer a = send("DELETE", path);
            assertThat(a.status()).as(path + ": " + a.body()).isBetween(400, 404);
            assertThat(a.headers().get("content-type")).as(path + " " + a).startsWith("application/json");
            assertThat(a.json().get("code").asInt()).as(path).isEqualTo(a.status());
            assertThat(a.json().get("message").asText()).as(path).isNotBlank();
        }
    }

    @Test
    void anEncodedSlashIsPartOfItsSegment() throws Exception {
        // the SDK encodes "/" in template, tag and snapshot names
        Answer template = get("/templates/my-team%2Fmy-template");
        assertThat(template.status()).as(template.body()).isEqualTo(400);
        assertThat(template.json().get("message").asText()).contains("namespace 'my-team' is not your team");
        Answer tags = get("/templates/my-team%2Fmy-template/tags");
        assertThat(tags.status()).as(tags.body()).isEqualTo(400);
        Answer own = get("/templates/admin%2Fmy-template%3Av1/tags");
        assertThat(own.status()).as(own.body()).isEqualTo(404);
        assertThat(own.json().get("message").asText()).contains("template 'admin/my-template:v1' not found");
        // not a route (snapshots are listed at /snapshots), yet answered by the router, not a bare 400
        Answer snapshot = get("/snapshots/team%2Fsnap");
        assertThat(snapshot.status()).as(snapshot.body()).isEqualTo(404);
        assertThat(snapshot.json().get("message").asText()).contains("no route for GET /snapshots/team%2Fsnap");

        // routed on the decoded segment: one sandbox id "abc/pause", not the pause route of "abc"
        Answer one = get("/sandboxes/abc%2Fpause");
        assertThat(one.status()).as(one.body()).isEqualTo(404);
        assertThat(one.json().get("message").asText()).contains("sandbox abc/pause not found");
        Answer dots = get("/sandboxes/..%2F..%2Fetc"); // a name, never a path to walk
        assertThat(dots.status()).as(dots.body()).isEqualTo(404);
        assertThat(dots.json().get("message").asText()).contains("sandbox ../../etc not found");
        Answer lower = get("/sandboxes/abc%2fdef");
        assertThat(lower.json().get("message").asText()).contains("sandbox abc/def not found");
        // other escapes of a segment are decoded too
        String id = sandbox.get("sandboxID").asText();
        Answer encodedId = get("/sandboxes/" + "%" + Integer.toHexString(id.charAt(0)) + id.substring(1));
        assertThat(encodedId.status()).as(encodedId.body()).isEqualTo(200);
        assertThat(encodedId.json().get("sandboxID").asText()).isEqualTo(id);
    }
}
