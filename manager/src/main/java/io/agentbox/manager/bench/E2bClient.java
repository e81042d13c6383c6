package io.agentbox.manager.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.WWWAuthenticationProtocolHandler;
import org.eclipse.jetty.http.HttpMethod;

/**
 * The few E2B calls the benchmarks make, as the SDKs make them (docs/e2b-wire.md#sandbox-routes for the
 * control plane, docs/e2b-wire.md#streams-and-envelopes for envd's Connect streaming {@code process.Process/Start}), over one
 * Jetty HTTP/1.1 client with keep-alive connections (one per concurrent call). The JDK's
 * {@code java.net.http} client was tried first: it added 2 to 10 ms per call on loopback, more
 * than the claims it was to measure.
 *
 * <p>Errors: every call throws {@link BenchException} naming the call, the HTTP status and the
 * server's message when the answer is not the success the SDK expects.
 */
public final class E2bClient implements AutoCloseable {
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
        this.http = new HttpClient();
        http.setMaxConnectionsPerDestination(2048);
        http.setConnectTimeout(10_000);
        http.setFollowRedirects(false);
        try {
            http.start();
            // a 401 is an answer to report, not a challenge to answer (and E2B sends no WWW-Authenticate)
            http.getProtocolHandlers().remove(WWWAuthenticationProtocolHandler.NAME);
        } catch (Exception e) {
            throw new BenchException("cannot start the HTTP client: " + e.getMessage());
        }
    }

    /** {@code POST /sandboxes} → 201; the sandbox is ready for commands when this returns. */
    public Sandbox create(String template) {
        // an hour: on a loaded machine the untimed kills after a 1,000-claim burst can take longer
        // than five minutes, and a sandbox that timed out meanwhile answers its kill with 404
        byte[] body = ("{\"templateID\":" + Json.MAPPER.valueToTree(template) + ",\"timeout\":3600}")
                .getBytes(StandardCharsets.UTF_8);
        ContentResponse r = send(http.newRequest(apiUrl.resolve("/sandboxes")).method(HttpMethod.POST)
                .headers(h -> h.put("X-API-Key", apiKey))
                .body(new BytesRequestContent("application/json", body)), "create sandbox");
        expect(r, 201, "create sandbox");
        try {
            JsonNode n = Json.MAPPER.readTree(r.getContent());
            return new Sandbox(n.path("sandboxID").asText(), n.path("envdAccessToken").asText(null));
        } catch (IOException e) {
            throw new BenchException("create sandbox: unreadable answer: " + e.getMessage());
        }
    }

    /** {@code DELETE /sandboxes/{id}} → 204. */
    public void kill(String sandboxId) {
        ContentResponse r = send(http.newRequest(apiUrl.resolve("/sandboxes/" + sandboxId)).method(HttpMethod.DELETE)
                .headers(h -> h.put("X-API-Key", apiKey)), "kill sandbox");
        expect(r, 204, "kill sandbox " + sandboxId);
    }

    /** {@code POST /v1/sandboxes/{id}/reset} → 200 (docs/snapshots-and-reset.md). */
    public void reset(String sandboxId) {
        ContentResponse r = send(http.newRequest(apiUrl.resolve("/v1/sandboxes/" + sandboxId + "/reset")).method(HttpMethod.POST)
                .headers(h -> h.put("X-API-Key", apiKey))
                .body(new BytesRequestContent("application/json", "{}".getBytes(StandardCharsets.UTF_8))), "reset sandbox");
        expect(r, 200, "reset sandbox " + sandboxId);
    }

    /** {@code POST /sandboxes/{id}/snapshots} → 201; the snapshot id. {@code name} may be null (unnamed). */
    public String snapshot(String sandboxId, String name) {
        String body = name == null ? "{}" : "{\"name\":" + Json.MAPPER.valueToTree(name) + "}";
        ContentResponse r = send(http.newRequest(apiUrl.resolve("/sandboxes/" + sandboxId + "/snapshots")).method(HttpMethod.POST)
                .headers(h -> h.put("X-API-Key", apiKey))
                .body(new BytesRequestContent("application/json", body.getBytes(StandardCharsets.UTF_8))), "create snapshot");
        expect(r, 201, "create snapshot of " + sandboxId);
        try {
            return Json.MAPPER.readTree(r.getContent()).path("snapshotID").asText();
        } catch (IOException e) {
            throw new BenchException("create snapshot: unreadable answer: " + e.getMessage());
        }
    }

    /** {@code DELETE /templates/{snapshotId}} → 204 (404 is fine: already gone). */
    public void deleteSnapshot(String snapshotId) {
        ContentResponse r = send(http.newRequest(apiUrl.resolve("/templates/"
                        + URLEncoder.encode(snapshotId, StandardCharsets.UTF_8))).method(HttpMethod.DELETE)
                .headers(h -> h.put("X-API-Key", apiKey)), "delete snapshot");
        if (r.getStatus() != 404) {
            expect(r, 204, "delete snapshot " + snapshotId);
        }
    }

    /**
     * Runs {@code command} as {@code commands.run(command)} does ({@code /bin/bash -l -c command})
     * and waits for its end.
     *
     * @return the command's exit code
     */
    public int run(Sandbox sandbox, String command) {
        return start(sandbox, "/bin/bash", List.of("-l", "-c", command));
    }

    /**
     * Starts {@code cmd} with {@code args} as they are (no shell) and waits for its end.
     *
     * @return the command's exit code
     */
    public int start(Sandbox sandbox, String cmd, List<String> args) {
        String start = "{\"process\":{\"cmd\":" + Json.MAPPER.valueToTree(cmd) + ",\"args\":"
                + Json.MAPPER.valueToTree(args) + "},\"stdin\":false}";
        Request b = http.newRequest(sandboxUrl.resolve("/process.Process/Start")).method(HttpMethod.POST)
                .headers(h -> {
                    h.put("Connect-Protocol-Version", "1");
                    h.put("Connect-Timeout-Ms", "60000");
                    h.put("E2b-Sandbox-Id", sandbox.id());
                    h.put("E2b-Sandbox-Port", "49983");
                    if (sandbox.accessToken() != null) {
                        h.put("X-Access-Token", sandbox.accessToken());
                    }
                })
                .body(new BytesRequestContent("application/connect+json", ConnectFrames.envelope(start)));
        ContentResponse r = send(b, "run command");
        expect(r, 200, "run command in " + sandbox.id());
        return ConnectFrames.exitCode(ByteBuffer.wrap(r.getContent()), sandbox.id());
    }

    private ContentResponse send(Request request, String what) {
        try {
            return request.timeout(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send();
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new BenchException(what + ": " + cause + " (" + request.getURI() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException(what + ": interrupted");
        }
    }

    private static void expect(ContentResponse r, int status, String what) {
        if (r.getStatus() != status) {
            String body = r.getContentAsString();
            throw new BenchException(what + ": HTTP " + r.getStatus() + " "
                    + (body.length() > 300 ? body.substring(0, 300) : body));
        }
    }

    @Override
    public void close() {
        try {
            http.stop();
        } catch (Exception e) {
            // shutting down anyway
        }
    }

    private static URI strip(URI u) {
        String s = u.toString();
        return URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    }
}
