package io.agentbox.manager.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.api.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The few E2B calls the benchmarks make, as the SDKs make them (e2b-protocol.md §3.1 for the
 * control plane, §5 for envd's Connect streaming {@code process.Process/Start}), over one
 * HTTP/1.1 client with keep-alive connections.
 *
 * <p>Errors: every call throws {@link BenchException} naming the call, the HTTP status and the
 * server's message when the answer is not the success the SDK expects.
 */
public final class E2bClient {
    /** A created sandbox: its id and the envd access token for its data-plane calls. */
    public record Sandbox(String id, String accessToken) {}

    static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

    private final URI apiUrl;
    private final URI sandboxUrl;
    private final String apiKey;
    private final HttpClient http;

    /**
     * @param apiUrl control plane base, e.g. {@code http://127.0.0.1:8080} (E2B_API_URL)
     * @param sandboxUrl envd base for every sandbox (E2B_SANDBOX_URL; routed by header)
     */
    public E2bClient(URI apiUrl, URI sandboxUrl, String apiKey) {
        this.apiUrl = strip(apiUrl);
        this.sandboxUrl = strip(sandboxUrl);
        this.apiKey = apiKey;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    /** {@code POST /sandboxes} → 201; the sandbox is ready for commands when this returns. */
    public Sandbox create(String template) {
        byte[] body = ("{\"templateID\":" + Json.MAPPER.valueToTree(template) + ",\"timeout\":300}")
                .getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> r = send(HttpRequest.newBuilder(apiUrl.resolve("/sandboxes"))
                .header("X-API-Key", apiKey).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)), "create sandbox");
        expect(r, 201, "create sandbox");
        try {
            JsonNode n = Json.MAPPER.readTree(r.body());
            return new Sandbox(n.path("sandboxID").asText(), n.path("envdAccessToken").asText(null));
        } catch (IOException e) {
            throw new BenchException("create sandbox: unreadable answer: " + e.getMessage());
        }
    }

    /** {@code DELETE /sandboxes/{id}} → 204. */
    public void kill(String sandboxId) {
        HttpResponse<byte[]> r = send(HttpRequest.newBuilder(apiUrl.resolve("/sandboxes/" + sandboxId))
                .header("X-API-Key", apiKey).DELETE(), "kill sandbox");
        expect(r, 204, "kill sandbox " + sandboxId);
    }

    /**
     * Runs {@code command} as {@code commands.run(command)} does ({@code /bin/bash -l -c command})
     * and waits for its end.
     *
     * @return the command's exit code
     */
    public int run(Sandbox sandbox, String command) {
        String start = "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\","
                + Json.MAPPER.valueToTree(command) + "]},\"stdin\":false}";
        HttpRequest.Builder b = HttpRequest.newBuilder(sandboxUrl.resolve("/process.Process/Start"))
                .header("Connect-Protocol-Version", "1").header("Content-Type", "application/connect+json")
                .header("Connect-Timeout-Ms", "60000").header("E2b-Sandbox-Id", sandbox.id())
                .header("E2b-Sandbox-Port", "49983")
                .POST(HttpRequest.BodyPublishers.ofByteArray(ConnectFrames.envelope(start)));
        if (sandbox.accessToken() != null) {
            b.header("X-Access-Token", sandbox.accessToken());
        }
        HttpResponse<byte[]> r = send(b, "run command");
        expect(r, 200, "run command in " + sandbox.id());
        return ConnectFrames.exitCode(ByteBuffer.wrap(r.body()), sandbox.id());
    }

    private HttpResponse<byte[]> send(HttpRequest.Builder request, String what) {
        try {
            return http.send(request.timeout(CALL_TIMEOUT).build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new BenchException(what + ": " + e.getMessage() + " (" + apiUrl + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException(what + ": interrupted");
        }
    }

    private static void expect(HttpResponse<byte[]> r, int status, String what) {
        if (r.statusCode() != status) {
            String body = new String(r.body(), StandardCharsets.UTF_8);
            throw new BenchException(what + ": HTTP " + r.statusCode() + " "
                    + (body.length() > 300 ? body.substring(0, 300) : body));
        }
    }

    private static URI strip(URI u) {
        String s = u.toString();
        return URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    }
}
