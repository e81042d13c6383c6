package io.agentbox.manager.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.testing.ApiUnderTest;
import io.agentbox.manager.testing.InProcessRouter;
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
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The public API over real HTTP against an in-process worker (real SandboxHost when available). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ApiServerTest {
    ApiUnderTest api;
    HubStore store;
    InProcessRouter router;
    ApiServer server;
    String key;
    String otherTeamKey;
    String base;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        store = api.store;
        router = api.router;
        server = api.server;
        key = api.adminKey;
        otherTeamKey = store.createApiKey("other", "user");
        base = api.base;
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    // ---- helpers -------------------------------------------------------------------------------

    record Res(int status, JsonNode json, String text, java.net.http.HttpHeaders headers) {}

    Res call(String method, String path, String apiKey, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (apiKey != null) {
            b.header("X-API-Key", apiKey);
        }
        return send(b.build());
    }

    Res send(HttpRequest req) throws Exception {
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        JsonNode json = null;
        if (r.body() != null && !r.body().isEmpty() && r.headers().firstValue("Content-Type").orElse("").contains("json")) {
            json = Json.MAPPER.readTree(r.body());
        }
        return new Res(r.statusCode(), json, r.body(), r.headers());
    }

    JsonNode create(String body) throws Exception {
        Res r = call("POST", "/v2/sandboxes", key, body);
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.json();
    }

    HttpRequest.Builder envd(JsonNode sbx, String path) {
        return HttpRequest.newBuilder(URI.create(base + path))
                .header("E2b-Sandbox-Id", sbx.get("sandboxID").asText())
                .header("E2b-Sandbox-Port", "49983")
                .header("X-Access-Token", sbx.get("envdAccessToken").asText());
    }

    Res rpc(JsonNode sbx, String method, String json) throws Exception {
        return send(envd(sbx, "/" + method).header("Content-Type", "application/json")
                .header("Connect-Protocol-Version", "1").POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    static byte[] envelope(String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + p.length).put((byte) 0).putInt(p.length).put(p).array();
    }

    record Frame(int flags, JsonNode json, long atMs) {}

    /** Starts a process and returns every envelope with its arrival time relative to the request. */
    List<Frame> startStream(JsonNode sbx, String cmd, String extraJson, String... headers) throws Exception {
        String body = "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\"," + Json.MAPPER.writeValueAsString(cmd) + "]"
                + extraJson + "},\"stdin\":false}";
        HttpRequest.Builder b = envd(sbx, "/process.Process/Start").header("Content-Type", "application/connect+json")
                .header("Connect-Protocol-Version", "1").POST(HttpRequest.BodyPublishers.ofByteArray(envelope(body)));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        long t0 = System.currentTimeMillis();
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/connect+json");
        List<Frame> frames = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(r.body())) {
            while (true) {
                int flags;
                try {
                    flags = in.readUnsignedByte();
                } catch (EOFException e) {
                    break;
                }
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                frames.add(new Frame(flags, Json.MAPPER.readTree(payload), System.currentTimeMillis() - t0));
            }
        }
        return frames;
    }

    static String stdout(List<Frame> frames, String stream) {
        StringBuilder sb = new StringBuilder();
        for (Frame f : frames) {
            JsonNode d = f.json().at("/event/data/" + stream);
            if (!d.isMissingNode()) {
                sb.append(new String(Base64.getDecoder().decode(d.asText()), StandardCharsets.UTF_8));
            }
        }
        return sb.toString();
    }

    // ---- control plane -------------------------------------------------------------------------

    @Test
    void rejectsMissingAndWrongApiKeys() throws Exception {
        Res none = call("GET", "/v2/sandboxes", null, null);
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.json().get("code").asInt()).isEqualTo(401);
        assertThat(none.json().get("message").asText()).isNotEmpty();
        assertThat(call("POST", "/v2/sandboxes", "e2b_0000", "{}").status()).isEqualTo(401);
    }

    @Test
    void sandboxLifecycleAndTenancy() throws Exception {
        JsonNode sbx = create("{\"templateID\":\"base\",\"metadata\":{\"owner\":\"t\"},\"envVars\":{\"E\":\"x\"},\"timeout\":120}");
        String id = sbx.get("sandboxID").asText();
        assertThat(id).endsWith("-local");
        assertThat(sbx.get("templateID").asText()).isEqualTo("base");
        assertThat(sbx.get("clientID").asText()).isNotEmpty();
        assertThat(sbx.get("envdVersion").asText()).isEqualTo("0.5.7");
        assertThat(sbx.get("envdAccessToken").asText()).hasSize(40);
        assertThat(sbx.has("domain") && sbx.get("domain").isNull()).isTrue();

        Res detail = call("GET", "/sandboxes/" + id, key, null);
        assertThat(detail.status()).isEqualTo(200);
        for (String f : List.of("templateID", "sandboxID", "clientID", "startedAt", "endAt", "cpuCount", "memoryMB",
                "diskSizeMB", "state", "envdVersion", "metadata", "envdAccessToken")) {
            assertThat(detail.json().has(f)).as(f).isTrue();
        }
        assertThat(detail.json().get("state").asText()).isEqualTo("running");
        assertThat(detail.json().at("/metadata/owner").asText()).isEqualTo("t");

        Res list = call("GET", "/v2/sandboxes?metadata=" + java.net.URLEncoder.encode("owner=t", StandardCharsets.UTF_8), key, null);
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json().findValuesAsText("sandboxID")).contains(id);
        assertThat(call("GET", "/v2/sandboxes?metadata=owner%3Dnope", key, null).json().findValuesAsText("sandboxID")).doesNotContain(id);
        assertThat(call("GET", "/v2/sandboxes?state=paused", key, null).json()).isEmpty();
        assertThat(call("GET", "/sandboxes", key, null).json().findValuesAsText("sandboxID")).contains(id);

        // another team cannot see or touch it
        assertThat(call("GET", "/sandboxes/" + id, otherTeamKey, null).status()).isEqualTo(404);
        assertThat(call("DELETE", "/sandboxes/" + id, otherTeamKey, null).status()).isEqualTo(404);
        assertThat(call("GET", "/v2/sandboxes", otherTeamKey, null).json().findValuesAsText("sandboxID")).doesNotContain(id);

        assertThat(call("POST", "/sandboxes/" + id + "/timeout", key, "{\"timeout\":60}").status()).isEqualTo(204);
        long endAt = java.time.Instant.parse(call("GET", "/sandboxes/" + id, key, null).json().get("endAt").asText()).toEpochMilli();
        assertThat(endAt - System.currentTimeMillis()).isBetween(50_000L, 61_000L);
        Res conn = call("POST", "/v2/sandboxes/" + id + "/connect", key, "{\"timeout\":600}");
        assertThat(conn.status()).isEqualTo(200);
        assertThat(conn.json().get("envdAccessToken").asText()).isEqualTo(sbx.get("envdAccessToken").asText());
        assertThat(call("POST", "/sandboxes/" + id + "/connect", key, "{}").status()).isEqualTo(200);

        assertThat(call("DELETE", "/sandboxes/" + id, key, null).status()).isEqualTo(204);
        Res again = call("DELETE", "/sandboxes/" + id, key, null);
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.json().get("code").asInt()).isEqualTo(404);
        assertThat(call("GET", "/sandboxes/" + id, key, null).status()).isEqualTo(404);
        assertThat(call("POST", "/v2/sandboxes/" + id + "/connect", key, "{}").json().get("code").asInt()).isEqualTo(404);

        // the data plane answers like E2B's proxy for a dead sandbox
        Res health = send(envd(sbx, "/health").GET().build());
        assertThat(health.status()).isEqualTo(502);
        assertThat(health.json().get("sandboxId").asText()).isEqualTo(id);
        assertThat(health.json().get("message").asText()).isEqualTo("The sandbox was not found");
        assertThat(health.json().get("code").asInt()).isEqualTo(502);
        assertThat(rpc(sbx, "process.Process/List", "{}").status()).isEqualTo(502);
    }

    @Test
    void badInput() throws Exception {
        Res unknown = call("POST", "/v2/sandboxes", key, "{\"templateID\":\"nope\"}");
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.json().get("message").asText()).contains("nope").contains("base");
        assertThat(call("POST", "/v2/sandboxes", key, "{\"templateID\":").status()).isEqualTo(400);
        assertThat(call("POST", "/v2/sandboxes", key, "[1]").status()).isEqualTo(400);
        assertThat(call("POST", "/v2/sandboxes", key, "{\"timeout\":-1}").status()).isEqualTo(400);
        assertThat(call("POST", "/v2/sandboxes", key, "{\"metadata\":{\"a\":1}}").status()).isEqualTo(400);
        Res big = call("POST", "/v2/sandboxes", key, "{\"x\":\"" + "a".repeat(2 << 20) + "\"}");
        assertThat(big.status()).isEqualTo(413);
        assertThat(big.json().get("code").asInt()).isEqualTo(413);
        Res pause = call("POST", "/sandboxes/abc/pause", key, "{}");
        assertThat(pause.status()).isEqualTo(404);
        assertThat(pause.json().get("code").asInt()).isEqualTo(404);
        assertThat(call("POST", "/sandboxes/abc/pause", key, "{\"memory\":\"yes\"}").status()).isEqualTo(400);
        assertThat(call("POST", "/templates", key, "{}").status()).isEqualTo(501);
        Res templates = call("GET", "/templates", key, null);
        assertThat(templates.status()).isEqualTo(200);
        assertThat(templates.json().get(0).get("templateID").asText()).isEqualTo("base");
        assertThat(call("GET", "/nothing-here", key, null).status()).isEqualTo(404);
        assertThat(call("POST", "/v2/sandboxes", key, "{\"timeout\":0}").status()).isEqualTo(400);
        // errors Jetty raises before our handlers run are JSON too (an encoded dot segment; an
        // encoded slash is accepted as part of its segment, RawHttpTest)
        Res ambiguous = call("GET", "/sandboxes/%2e%2e/etc", key, null);
        assertThat(ambiguous.status()).isEqualTo(400);
        assertThat(ambiguous.json().get("code").asInt()).isEqualTo(400);
    }

    @Test
    void noWorkerConnected() throws Exception {
        try (InProcessRouter empty = new InProcessRouter(); ApiServer other = new ApiServer(store, empty, "127.0.0.1", 0)) {
            other.start();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + other.port() + "/v2/sandboxes"))
                    .header("X-API-Key", key).POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(503);
            JsonNode json = Json.MAPPER.readTree(r.body());
            assertThat(json.get("code").asInt()).isEqualTo(503);
            assertThat(json.get("message").asText()).contains("no worker cluster is connected");
        }
    }

    // ---- data plane ----------------------------------------------------------------------------

    @Test
    void startStreamsEnvelopesInOrder() throws Exception {
        JsonNode sbx = create("{\"envVars\":{\"E\":\"from-create\"}}");
        List<Frame> frames = startStream(sbx, "echo hello; echo oops >&2; echo \"$E $C\"; pwd; exit 3",
                ",\"envs\":{\"C\":\"per-cmd\"},\"cwd\":\"/tmp\"");
        assertThat(frames.get(0).json().at("/event/start/pid").asInt()).isPositive();
        assertThat(stdout(frames, "stdout")).isEqualTo("hello\nfrom-create per-cmd\n/tmp\n");
        assertThat(stdout(frames, "stderr")).isEqualTo("oops\n");
        Frame end = frames.get(frames.size() - 2);
        assertThat(end.json().at("/event/end/exitCode").asInt()).isEqualTo(3);
        assertThat(end.json().at("/event/end/status").asText()).isEqualTo("exit status 3");
        Frame eos = frames.get(frames.size() - 1);
        assertThat(eos.flags()).isEqualTo(2);
        assertThat(eos.json().size()).isZero();

        List<Frame> badCwd = startStream(sbx, "pwd", ",\"cwd\":\"/nope\"");
        assertThat(badCwd).hasSize(1);
        assertThat(badCwd.get(0).flags()).isEqualTo(2);
        assertThat(badCwd.get(0).json().at("/error/code").asText()).isEqualTo("invalid_argument");
    }

    @Test
    void streamsOutputAsProducedWithKeepalivesAndTimeouts() throws Exception {
        JsonNode sbx = create("{}");
        List<Frame> frames = startStream(sbx, "echo a; sleep 2.5; echo b", "", "Keepalive-Ping-Interval", "1");
        Frame firstData = frames.stream().filter(f -> f.json().at("/event/data").isObject()).findFirst().orElseThrow();
        Frame end = frames.stream().filter(f -> f.json().at("/event/end").isObject()).findFirst().orElseThrow();
        assertThat(end.atMs() - firstData.atMs()).isGreaterThan(1500); // "a" arrived long before the end
        assertThat(frames).anyMatch(f -> f.json().at("/event/keepalive").isObject());

        long t0 = System.currentTimeMillis();
        List<Frame> killed = startStream(sbx, "sleep 30", "", "Connect-Timeout-Ms", "500");
        assertThat(System.currentTimeMillis() - t0).isLessThan(5000);
        assertThat(killed.get(killed.size() - 2).json().at("/event/end/exitCode").asInt()).isEqualTo(-1);
    }

    @Test
    void envdRequiresAccessToken() throws Exception {
        JsonNode sbx = create("{}");
        Res r = send(HttpRequest.newBuilder(URI.create(base + "/process.Process/List"))
                .header("E2b-Sandbox-Id", sbx.get("sandboxID").asText()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertThat(r.status()).isEqualTo(401);
        assertThat(r.json().get("code").asText()).isEqualTo("unauthenticated");
        assertThat(send(envd(sbx, "/health").GET().build()).status()).isEqualTo(204);
        // Host-based routing works without the header
        Res viaHost = send(HttpRequest.newBuilder(URI.create(base + "/process.Process/List"))
                .header("X-Access-Token", sbx.get("envdAccessToken").asText()).header("Content-Type", "application/json")
                .header("X-Forwarded-Host", "ignored")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertThat(viaHost.status()).isEqualTo(400); // no header and Host is 127.0.0.1
    }

    @Test
    void filesystemAndFiles() throws Exception {
        JsonNode sbx = create("{}");
        String boundary = "----b0undary";
        String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/home/user/d/a.txt\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\nhi\r\n"
                + "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"rel.txt\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\nrelative\r\n--" + boundary + "--\r\n";
        Res up = send(envd(sbx, "/files").header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofString(multipart)).build());
        assertThat(up.status()).as(up.text()).isEqualTo(200);
        assertThat(up.json().findValuesAsText("path")).containsExactly("/home/user/d/a.txt", "/home/user/rel.txt");
        assertThat(up.json().get(0).get("type").asText()).isEqualTo("file");

        Res octet = send(envd(sbx, "/files?path=%2Fhome%2Fuser%2Fd%2Fb.bin").header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[200_000])).build());
        assertThat(octet.status()).isEqualTo(200);

        Res read = send(envd(sbx, "/files?path=%2Fhome%2Fuser%2Fd%2Fa.txt").GET().build());
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.text()).isEqualTo("hi");
        HttpResponse<byte[]> bin = http.send(envd(sbx, "/files?path=/home/user/d/b.bin").GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(bin.body()).hasSize(200_000);
        Res missing = send(envd(sbx, "/files?path=/home/user/none").GET().build());
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.json().get("code").asInt()).isEqualTo(404);
        assertThat(send(envd(sbx, "/files?path=/home/user/d").GET().build()).status()).isEqualTo(400);

        Res ls = rpc(sbx, "filesystem.Filesystem/ListDir", "{\"path\":\"/home/user/d\",\"depth\":1}");
        assertThat(ls.status()).isEqualTo(200);
        assertThat(ls.json().get("entries").findValuesAsText("name")).containsExactlyInAnyOrder("a.txt", "b.bin");
        for (JsonNode e : ls.json().get("entries")) {
            if (e.get("name").asText().equals("b.bin")) {
                assertThat(e.get("size").asText()).isEqualTo("200000"); // int64 as a JSON string
            }
        }
        assertThat(rpc(sbx, "filesystem.Filesystem/Stat", "{\"path\":\"/home/user/d/a.txt\"}").json().at("/entry/type").asText())
                .isEqualTo("FILE_TYPE_FILE");
        Res statMissing = rpc(sbx, "filesystem.Filesystem/Stat", "{\"path\":\"/home/user/zz\"}");
        assertThat(statMissing.status()).isEqualTo(404);
        assertThat(statMissing.json().get("code").asText()).isEqualTo("not_found");
        assertThat(rpc(sbx, "filesystem.Filesystem/MakeDir", "{\"path\":\"/home/user/n/m\"}").status()).isEqualTo(200);
        Res exists = rpc(sbx, "filesystem.Filesystem/MakeDir", "{\"path\":\"/home/user/n/m\"}");
        assertThat(exists.status()).isEqualTo(409);
        assertThat(exists.json().get("code").asText()).isEqualTo("already_exists");
        Res moved = rpc(sbx, "filesystem.Filesystem/Move", "{\"source\":\"/home/user/d/a.txt\",\"destination\":\"/home/user/n/a2.txt\"}");
        assertThat(moved.json().at("/entry/path").asText()).isEqualTo("/home/user/n/a2.txt");
        assertThat(rpc(sbx, "filesystem.Filesystem/Remove", "{\"path\":\"/home/user/n\"}").status()).isEqualTo(200);
        assertThat(rpc(sbx, "filesystem.Filesystem/Remove", "{\"path\":\"/home/user/n\"}").json().get("code").asText()).isEqualTo("not_found");
        // WatchDir of a missing directory: a stream whose end-of-stream envelope says so (what clients read)
        HttpResponse<byte[]> watch = http.send(envd(sbx, "/filesystem.Filesystem/WatchDir")
                .header("Content-Type", "application/connect+json").header("Connect-Protocol-Version", "1")
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope("{\"path\":\"/home/user/zz\"}"))).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(watch.statusCode()).isEqualTo(200);
        assertThat(watch.body()[0]).isEqualTo((byte) 2);
        JsonNode eos = Json.MAPPER.readTree(java.util.Arrays.copyOfRange(watch.body(), 5, watch.body().length));
        assertThat(eos.at("/error/code").asText()).isEqualTo("not_found");
        assertThat(eos.at("/error/message").asText()).contains("/home/user/zz");
    }

    @Test
    void pollingWatchers() throws Exception {
        JsonNode sbx = create("{}");
        assertThat(rpc(sbx, "filesystem.Filesystem/MakeDir", "{\"path\":\"/home/user/w\"}").status()).isEqualTo(200);
        Res created = rpc(sbx, "filesystem.Filesystem/CreateWatcher", "{\"path\":\"/home/user/w\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(200);
        String id = created.json().get("watcherId").asText();
        String poll = "{\"watcherId\":\"" + id + "\"}";
        assertThat(rpc(sbx, "filesystem.Filesystem/MakeDir", "{\"path\":\"/home/user/w/sub\"}").status()).isEqualTo(200);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < 100 && !seen.contains("sub EVENT_TYPE_CREATE"); i++) {
            Res events = rpc(sbx, "filesystem.Filesystem/GetWatcherEvents", poll);
            assertThat(events.status()).as(events.text()).isEqualTo(200);
            events.json().get("events").forEach(e -> seen.add(e.get("name").asText() + " " + e.get("type").asText()));
            Thread.sleep(100);
        }
        assertThat(seen).contains("sub EVENT_TYPE_CREATE");
        assertThat(rpc(sbx, "filesystem.Filesystem/RemoveWatcher", poll).status()).isEqualTo(200);
        Res gone = rpc(sbx, "filesystem.Filesystem/GetWatcherEvents", poll);
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.json().get("code").asText()).isEqualTo("not_found");
        Res missing = rpc(sbx, "filesystem.Filesystem/CreateWatcher", "{\"path\":\"/home/user/none\"}");
        assertThat(missing.json().get("code").asText()).isEqualTo("not_found");
    }

    @Test
    void portsOfHostNetworkSandboxesAreNotForwarded() throws Exception {
        JsonNode sbx = create("{}"); // the base template here shares the host network
        Res r = send(HttpRequest.newBuilder(URI.create(base + "/")).header("E2b-Sandbox-Id", sbx.get("sandboxID").asText())
                .header("E2b-Sandbox-Port", "8000").GET().build());
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.json().get("message").asText()).contains("network 'isolated'");
        Res unknown = send(HttpRequest.newBuilder(URI.create(base + "/sandboxes/nosuchsandbox/8000/x")).GET().build());
        assertThat(unknown.status()).isEqualTo(502);
        assertThat(unknown.json().get("message").asText()).isEqualTo("The sandbox was not found");
        Res badPort = send(HttpRequest.newBuilder(URI.create(base + "/sandboxes/nosuchsandbox/70000/x")).GET().build());
        assertThat(badPort.status()).isEqualTo(400);
    }

    @Test
    void processUnaryRpcs() throws Exception {
        JsonNode sbx = create("{}");
        assertThat(rpc(sbx, "process.Process/List", "{}").json().get("processes")).isEmpty();
        Res kill = rpc(sbx, "process.Process/SendSignal", "{\"process\":{\"pid\":999999},\"signal\":\"SIGNAL_SIGKILL\"}");
        assertThat(kill.status()).isEqualTo(404);
        assertThat(kill.json().get("code").asText()).isEqualTo("not_found");
        assertThat(rpc(sbx, "process.Process/List", "{bad").status()).isEqualTo(400);
        Res resize = rpc(sbx, "process.Process/Update", "{\"process\":{\"pid\":999999},\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}");
        assertThat(resize.status()).isEqualTo(404);
        assertThat(resize.json().get("code").asText()).isEqualTo("not_found");
        assertThat(rpc(sbx, "process.Process/Update", "{\"process\":{\"pid\":1},\"pty\":{\"size\":{\"cols\":0,\"rows\":24}}}")
                .json().get("code").asText()).isEqualTo("invalid_argument");
        assertThat(rpc(sbx, "process.Process/StreamInput", "{}").status()).isEqualTo(501);

        // attaching to an unknown pid: HTTP 200 stream whose end-of-stream carries not_found
        HttpResponse<byte[]> attach = http.send(envd(sbx, "/process.Process/Connect")
                .header("Content-Type", "application/connect+json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope("{\"process\":{\"pid\":999999}}"))).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(attach.statusCode()).isEqualTo(200);
        ByteBuffer buf = ByteBuffer.wrap(attach.body());
        assertThat(buf.get()).isEqualTo((byte) 2);
        byte[] eos = new byte[buf.getInt()];
        buf.get(eos);
        assertThat(Json.MAPPER.readTree(eos).at("/error/code").asText()).isEqualTo("not_found");
        // a unary content type on a streaming method is refused
        assertThat(rpc(sbx, "process.Process/Start", "{}").status()).isEqualTo(415);
    }
}
