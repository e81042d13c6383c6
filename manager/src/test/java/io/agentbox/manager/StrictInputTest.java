package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.testing.RawHttp;
import io.agentbox.manager.testing.RawHttp.Reply;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input on every surface (hub control plane, envd data plane with a real sandbox, worker API,
 * management API) is a 400 that names the parameter or field, never a 5xx, and stores nothing.
 * Requests go over raw sockets: ordinary clients refuse to send most of them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StrictInputTest {
    Standalone system;
    WorkerApi workerApi;
    String key;
    String token;
    int api;
    int management;
    JsonNode sandbox;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        system = Standalone.start(HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0).withBase(new BaseTemplate(null, 2)), Duration.ofSeconds(60), line -> { });
        key = system.hub().newAdminKey().orElseThrow();
        token = system.hub().newManagerToken().orElseThrow();
        api = system.hub().apiPort();
        management = system.hub().managementPort();
        workerApi = WorkerApi.start(system.worker(), "127.0.0.1", 0);
        Reply created = control("POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"timeout\":600}");
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        sandbox = created.json();
    }

    @AfterAll
    void stop() {
        if (workerApi != null) {
            workerApi.close();
        }
        if (system != null) {
            system.close();
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    Reply send(int port, byte[] request) throws Exception {
        return RawHttp.exchange(port, request);
    }

    Reply control(String method, String target, String body, String... headers) throws Exception {
        return send(api, RawHttp.request(method, target, body, withKey(headers)));
    }

    String[] withKey(String... headers) {
        List<String> all = new ArrayList<>(List.of(headers));
        all.add("X-API-Key: " + key);
        all.add("Content-Type: application/json");
        return all.toArray(String[]::new);
    }

    String[] envdHeaders(String contentType) {
        return new String[] {"E2b-Sandbox-Id: " + sandbox.get("sandboxID").asText(),
                "X-Access-Token: " + sandbox.get("envdAccessToken").asText(), "Content-Type: " + contentType};
    }

    Reply manage(String method, String target, String body) throws Exception {
        return send(management, RawHttp.request(method, target, body, "Authorization: Bearer " + token,
                "Content-Type: application/json"));
    }

    /** A request whose chunked body announces a chunk of size "zz". */
    static byte[] badChunk(String method, String target, String... headers) {
        byte[] head = RawHttp.request(method, target, (byte[]) null, headers);
        String h = new String(head, StandardCharsets.ISO_8859_1);
        h = h.substring(0, h.length() - 2) + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{\"a\":1}\r\n0\r\n\r\n";
        return h.getBytes(StandardCharsets.ISO_8859_1);
    }

    static void assert400(Reply r, String... messageParts) {
        assertThat(r.status()).as(r.toString()).isEqualTo(400);
        assertThat(r.message()).as(r.toString()).contains(messageParts);
    }

    int liveSandboxes() throws Exception {
        Reply r = control("GET", "/v2/sandboxes", null);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json().size();
    }

    @Test
    void aUriJettyRefusesIsAnsweredInTheNativeEnvelopeUnderV1() throws Exception {
        Reply empty = send(api, RawHttp.request("GET", "/v1/sandboxes//commands", (byte[]) null,
                withKey("X-Request-Id: strict-empty-segment")));
        assertThat(empty.status()).as(empty.toString()).isEqualTo(400);
        assertThat(empty.json().path("error").path("code").asText()).as(empty.toString()).isEqualTo("bad_request");
        assertThat(empty.json().path("error").path("message").asText()).as(empty.toString()).contains("Ambiguous");
        Reply headers = send(api, RawHttp.request("GET", "/v1/sandboxes", (byte[]) null,
                withKey("X-Filler: " + "x".repeat(20_000))));
        assertThat(headers.status()).as(headers.toString()).isEqualTo(431);
        assertThat(headers.json().path("error").path("code").asText()).as(headers.toString())
                .isEqualTo("request_header_fields_too_large");
        Reply e2b = send(api, RawHttp.request("GET", "/sandboxes//x", (byte[]) null, withKey()));
        assertThat(e2b.status()).as(e2b.toString()).isEqualTo(400);
        assertThat(e2b.json().path("code").asInt()).as("the E2B surface keeps its shape").isEqualTo(400);
    }

    // ---- query strings -------------------------------------------------------------------------

    @Test
    void aMalformedPercentEscapeIsA400NamingTheParameterOnEverySurface() throws Exception {
        assert400(control("GET", "/v2/sandboxes?limit=5&state=%zz", null), "'state'");
        assert400(control("GET", "/sandboxes?metadata=%e2%82", null), "'metadata'");
        assert400(send(api, RawHttp.request("GET", "/files?path=%", (byte[]) null, envdHeaders("application/json"))), "'path'");
        assert400(send(api, RawHttp.request("POST", "/files?username=user&path=%4", "x",
                envdHeaders("application/octet-stream"))), "'path'");
        assert400(send(api, RawHttp.request("GET", "/files?%zz=1&path=/tmp", (byte[]) null,
                envdHeaders("application/json"))), "name '%zz'");
        await().atMost(Duration.ofSeconds(30)).until(() -> workerApiCall("/v2/sandboxes").status() == 200);
        assert400(workerApiCall("/v2/sandboxes?state=%C0%AF"), "'state'");
        assert400(manage("GET", "/internal/api-keys?team=%zz", null), "'team'");
        assert400(manage("DELETE", "/internal/templates/nosuch?resourceVersion=%G1", null), "'resourceVersion'");
    }

    @Test
    void aQueryParameterHoldingNulIsA400NamingItOnEverySurface() throws Exception {
        // on the embedded PostgreSQL store a NUL reaching a query was a 500 that quoted the SQL
        assert400(manage("GET", "/internal/api-keys?team=%00", null), "'team'", "NUL");
        assert400(control("GET", "/v2/sandboxes?metadata=a%3D%00", null), "'metadata'", "NUL");
        assert400(send(api, RawHttp.request("GET", "/files?path=/tmp/%00x", (byte[]) null, envdHeaders("application/json"))),
                "'path'", "NUL");
    }

    Reply workerApiCall(String target) throws Exception {
        return send(workerApi.port(), RawHttp.request("GET", target, (byte[]) null, withKey()));
    }

    @Test
    void anUnknownStateIsA400NamingTheValue() throws Exception {
        assert400(control("GET", "/v2/sandboxes?state=bogus", null), "'bogus'", "state");
        assert400(control("GET", "/v2/sandboxes?state=running,paused,Running", null), "'Running'");
        assertThat(control("GET", "/v2/sandboxes?state=running,paused", null).status()).isEqualTo(200);
        assertThat(control("GET", "/v2/sandboxes?state=paused", null).json().size()).isZero();
    }

    // ---- bodies --------------------------------------------------------------------------------

    @Test
    void aGzipUploadThatIsNotGzipIsA400AndWritesNothing() throws Exception {
        String[] headers = concat(envdHeaders("application/octet-stream"), "Content-Encoding: gzip");
        assert400(send(api, RawHttp.request("POST", "/files?path=/tmp/not-gzip.txt", "hello, plain text", headers)),
                "gzip");
        Reply missing = send(api, RawHttp.request("GET", "/files?path=/tmp/not-gzip.txt", (byte[]) null,
                envdHeaders("application/json")));
        assertThat(missing.status()).as(missing.toString()).isEqualTo(404);

        // a gzip header followed by garbage fails while streaming: still a 400
        byte[] truncated = gzip("x".repeat(200_000).getBytes(StandardCharsets.UTF_8));
        truncated = java.util.Arrays.copyOf(truncated, truncated.length / 2);
        assert400(send(api, RawHttp.request("POST", "/files?path=/tmp/truncated.txt", truncated, headers)),
                "request body cannot be read");

        // the good case still works
        Reply ok = send(api, RawHttp.request("POST", "/files?path=/tmp/gz.txt", gzip("zipped".getBytes()), headers));
        assertThat(ok.status()).as(ok.toString()).isEqualTo(200);
        Reply read = send(api, RawHttp.request("GET", "/files?path=/tmp/gz.txt", (byte[]) null, envdHeaders("application/json")));
        assertThat(read.text()).isEqualTo("zipped");

        Reply br = send(api, RawHttp.request("POST", "/files?path=/tmp/br.txt", "x",
                concat(envdHeaders("application/octet-stream"), "Content-Encoding: br")));
        assertThat(br.status()).as(br.toString()).isEqualTo(415);
    }

    @Test
    void aBadChunkSizeIsA400OnEverySurface() throws Exception {
        assert400(send(api, badChunk("POST", "/v2/sandboxes", withKey())), "request body cannot be read");
        assert400(send(api, badChunk("POST", "/files?path=/tmp/chunk.txt", envdHeaders("application/octet-stream"))),
                "request body cannot be read");
        Reply rpc = send(api, badChunk("POST", "/filesystem.Filesystem/Stat", envdHeaders("application/json")));
        assertThat(rpc.status()).as(rpc.toString()).isEqualTo(400);
        assertThat(rpc.json().get("code").asText()).isEqualTo("invalid_argument");
        assert400(send(management, badChunk("POST", "/internal/teams", "Authorization: Bearer " + token)),
                "request body cannot be read");
        await().atMost(Duration.ofSeconds(30)).until(() -> workerApiCall("/v2/sandboxes").status() == 200);
        assert400(send(workerApi.port(), badChunk("POST", "/v2/sandboxes", withKey())), "request body cannot be read");
    }

    @Test
    void createTakesExactlyOneJsonObjectAndCreatesNothingOtherwise() throws Exception {
        int before = liveSandboxes();
        assert400(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\"} trailing"), "malformed JSON body");
        assert400(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\"}{}"), "Trailing token");
        assert400(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"templateID\":\"base\"}"),
                "Duplicate field 'templateID'");
        assert400(control("POST", "/v2/sandboxes", "null"), "must be a JSON object, got null");
        assert400(control("POST", "/v2/sandboxes", "[{\"templateID\":\"base\"}]"), "got an array");
        assert400(control("POST", "/v2/sandboxes", "  \n "), "must be a JSON object");
        byte[] binary = {'{', '"', 't', 'e', 'm', 'p', 'l', 'a', 't', 'e', 'I', 'D', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        assert400(send(api, RawHttp.request("POST", "/v2/sandboxes", binary, withKey())), "malformed JSON body");
        byte[] garbageAfter = {'{', '}', 0, (byte) 0xFF, (byte) 0xFE};
        assert400(send(api, RawHttp.request("POST", "/v2/sandboxes", garbageAfter, withKey())), "malformed JSON body");
        Reply deep = control("POST", "/v2/sandboxes", "{\"metadata\":" + "[".repeat(70) + "]".repeat(70) + "}");
        assert400(deep, "malformed JSON body", "nesting depth", "maximum allowed (64)");
        assertThat(deep.toString()).as("the parser's setting is no business of the client").doesNotContain("StreamReadConstraints");
        assertThat(liveSandboxes()).isEqualTo(before);
    }

    @Test
    void createRefusesUnsafeMetadataAndEnvs() throws Exception {
        int before = liveSandboxes();
        assert400(control("POST", "/v2/sandboxes", "{\"metadata\":{\"owner\":\"evil\\u202Etxt.exe\"}}"),
                "'metadata.owner'", "U+202E");
        assert400(control("POST", "/v2/sandboxes", "{\"metadata\":{\"a\\u0000b\":\"v\"}}"),
                "'metadata' key 'a\\u0000b'", "U+0000");
        assert400(control("POST", "/v2/sandboxes", "{\"metadata\":{\"k\":\"line\\nbreak\"}}"), "'metadata.k'", "U+000A");
        assert400(control("POST", "/v2/sandboxes", "{\"metadata\":{\"k\":\"\\ud800\"}}"), "'metadata.k'", "unpaired surrogate");
        assert400(control("POST", "/v2/sandboxes", "{\"envVars\":{\"A\":\"x\\u0000y\"}}"), "envVars: ", "'A' holds a NUL");
        assert400(control("POST", "/v2/sandboxes", "{\"envVars\":{\"A\":\"\\udc00\"}}"), "envVars.A holds U+DC00", "unpaired surrogate");
        assert400(control("POST", "/v2/sandboxes", "{\"envVars\":{\"A=B\":\"x\"}}"), "envVars: invalid environment variable name 'A=B'");
        assert400(control("POST", "/v2/sandboxes", "{\"envVars\":{\"\":\"x\"}}"), "invalid environment variable name ''");
        assert400(control("POST", "/v2/sandboxes", "{\"templateID\":\"ba\\u0007se\"}"), "'templateID'");
        assertThat(liveSandboxes()).isEqualTo(before);

        // multi-line env values and emoji metadata stay fine
        Reply ok = control("POST", "/v2/sandboxes",
                "{\"metadata\":{\"who\":\"\\ud83d\\ude00 team\"},\"envVars\":{\"PEM\":\"line1\\nline2\"}}");
        assertThat(ok.status()).as(ok.toString()).isEqualTo(201);
        control("DELETE", "/sandboxes/" + ok.json().get("sandboxID").asText(), null);
    }

    @Test
    void envdRefusesNulInCommandsAndEnvs() throws Exception {
        String[] headers = concat(envdHeaders("application/json"), "Connect-Protocol-Version: 1");
        Reply stat = send(api, RawHttp.request("POST", "/filesystem.Filesystem/Stat", "{\"path\":\"/tmp/a\\u0000b\"}", headers));
        assertThat(stat.status()).as(stat.toString()).isEqualTo(400);
        assertThat(stat.message()).contains("'path'", "U+0000");
        assertThat(send(api, RawHttp.request("GET", "/files?path=/tmp/a%00b", (byte[]) null, envdHeaders("application/json"))))
                .satisfies(r -> assert400(r, "'path'", "U+0000"));
        // found by InputFuzzTest: removing a directory holding a mount point was a 500. Only root may
        // try in a container sandbox: /.agentbox holds the bound init and busybox
        Reply remove = send(api, RawHttp.request("POST", "/filesystem.Filesystem/Remove", "{\"path\":\"/.agentbox\"}",
                concat(headers, "Authorization: Basic " + java.util.Base64.getEncoder().encodeToString("root:".getBytes()))));
        assertThat(remove.status()).as(remove.toString()).isEqualTo(400);
        assertThat(remove.message()).contains("mount point");
    }

    // ---- management API: nothing unsafe is stored ----------------------------------------------

    @Test
    void managementRefusesUnsafeTextAndStoresNothing() throws Exception {
        assert400(manage("POST", "/internal/templates", "{\"name\":\"nul-env\",\"envVars\":{\"A\":\"x\\u0000y\"}}"),
                "envVars.A", "U+0000");
        assert400(manage("POST", "/internal/templates", "{\"name\":\"nul-env\",\"envVars\":{\"1A\":\"x\"}}"),
                "envVars", "invalid environment variable name '1A'");
        assertThat(manage("GET", "/internal/templates/nul-env", null).status()).isEqualTo(404);
        assert400(manage("POST", "/internal/templates", "{\"name\":\"eq-env\",\"envVars\":{\"A=B\":\"x\"}}"), "invalid environment variable name 'A=B'");
        assert400(manage("POST", "/internal/templates", "{\"name\":\"bidi\",\"clusters\":[\"local\",\"lo\\u202Ecal\"]}"),
                "clusters[1]", "U+202E");
        assertThat(manage("GET", "/internal/templates/bidi", null).status()).isEqualTo(404);

        JsonNode keysBefore = manage("GET", "/internal/api-keys", null).json();
        for (String name : new String[] {"a\\u0000b", "tab\\there", "\\u202Egnp.exe", "lone\\udc00", "esc\\u001b[31m", "c1\\u0085"}) {
            Reply r = manage("POST", "/internal/api-keys", "{\"team\":\"admin\",\"name\":\"" + name + "\"}");
            assert400(r, "name holds U+");
        }
        assertThat(manage("GET", "/internal/api-keys", null).json()).isEqualTo(keysBefore);

        assert400(manage("POST", "/internal/teams", "{\"name\":\"t1\",\"description\":\"x\\u2066y\"}"), "description", "U+2066");
        assertThat(manage("GET", "/internal/teams", null).text()).doesNotContain("\"t1\"");

        assertThat(manage("POST", "/internal/clusters", "{\"id\":\"c1\"}").status()).isEqualTo(201);
        JsonNode config = manage("GET", "/internal/clusters/c1/config", null).json();
        assert400(manage("PUT", "/internal/clusters/c1/config",
                "{\"settings\":{\"ok\":\"fine\",\"bad\":\"x\\u0000\"}}"), "settings.bad", "U+0000");
        assert400(manage("PUT", "/internal/clusters/c1/config",
                "{\"hostAliases\":[{\"ip\":\"10.0.0.1\",\"hostnames\":[\"a\\u200Fb\"]}]}"), "hostnames[0]", "U+200F");
        assertThat(manage("GET", "/internal/clusters/c1/config", null).json()).isEqualTo(config);

        // strict JSON on the management API too
        assert400(manage("POST", "/internal/teams", "{\"name\":\"t2\",\"name\":\"t3\"}"), "Duplicate field 'name'");
        assert400(manage("POST", "/internal/teams", "{\"name\":\"t2\"} {}"), "Trailing token");
        assertThat(manage("GET", "/internal/teams", null).text()).doesNotContain("\"t2\"", "\"t3\"");
    }

    static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }

    static byte[] gzip(byte[] data) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(data);
        }
        return out.toByteArray();
    }
}
