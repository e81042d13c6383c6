package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A small client of the hub's native REST API {@code /v1} (docs/native-api.md): JSON calls, cursor
 * paging, raw file bodies and Server-Sent Events, with {@code Authorization: Bearer <key>}.
 *
 * <p>Errors: a status of 400 or more is an {@link ApiError} carrying the envelope's message and
 * request id; a hub that cannot be reached is a {@link ClientException} naming the URL and cause.
 *
 * <p>Limits: JSON answers are read whole (the API caps its lists at 1000 items a page); a JSON call
 * waits {@link #CALL_TIMEOUT}; streams (events, file bodies) have no overall timeout, since a
 * command may run for hours, but each SSE event is capped at {@link Sse#MAX_EVENT_BYTES}.
 */
public final class ApiClient {
    /** Longest wait for a JSON answer (a create may wait for a cold start or a pull to be refused). */
    public static final Duration CALL_TIMEOUT = Duration.ofSeconds(120);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Largest page asked for when listing everything. */
    static final int PAGE = 1000;
    static final ObjectMapper MAPPER = new ObjectMapper();

    private final ClientConfig.Settings settings;
    private final HttpClient http;

    public ApiClient(ClientConfig.Settings settings) {
        this.settings = settings;
        // HTTP/1.1: the JDK would otherwise try an h2c upgrade on every plain-http request
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT).build();
    }

    /** The hub's base URL, e.g. {@code http://127.0.0.1:8080}. */
    public String url() {
        return settings.url();
    }

    /** {@code s} encoded as one path segment or query value. */
    public static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** {@code GET path} → the JSON answer. */
    public JsonNode get(String path) {
        return call("GET", path, null);
    }

    /** {@code DELETE path}; any 2xx is success. */
    public void delete(String path) {
        call("DELETE", path, null);
    }

    /**
     * One JSON call.
     *
     * @param body serialised as the JSON request body; null sends none
     * @return the answer's JSON, or null for an empty body (204)
     */
    public JsonNode call(String method, String path, Object body) {
        HttpRequest.Builder b = request(path).timeout(CALL_TIMEOUT).header("Accept", "application/json");
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json(body)));
        }
        HttpResponse<byte[]> r = send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        check(r.statusCode(), r.body(), r);
        if (r.body().length == 0) {
            return null;
        }
        try {
            return MAPPER.readTree(r.body());
        } catch (IOException e) {
            throw new ClientException(method + " " + path + " answered " + r.statusCode() + " with a body that is not JSON");
        }
    }

    /**
     * Every item of a list route, following {@code nextCursor} until it is null.
     *
     * @param path the route with its query, if any (no {@code limit} or {@code cursor})
     */
    public List<JsonNode> list(String path) {
        List<JsonNode> items = new ArrayList<>();
        String cursor = null;
        String sep = path.contains("?") ? "&" : "?";
        do {
            JsonNode page = get(path + sep + "limit=" + PAGE + (cursor == null ? "" : "&cursor=" + enc(cursor)));
            if (page == null || page.isArray()) { // a plain array: a route without paging
                page = page == null ? MAPPER.createObjectNode() : MAPPER.createObjectNode().set("items", page);
            }
            page.path("items").forEach(items::add);
            JsonNode next = page.path("nextCursor");
            cursor = next.isTextual() && !next.asText().isEmpty() ? next.asText() : null;
        } while (cursor != null);
        return items;
    }

    /** {@code PUT path} with the file's bytes as the body ({@code application/octet-stream}) → the JSON answer. */
    public JsonNode upload(String path, Path file) {
        HttpRequest request;
        try {
            request = request(path).header("Content-Type", "application/octet-stream")
                    .PUT(HttpRequest.BodyPublishers.ofFile(file)).build();
        } catch (IOException e) {
            throw new ClientException("cannot read " + file + ": " + e.getMessage());
        }
        HttpResponse<byte[]> r = send(request, HttpResponse.BodyHandlers.ofByteArray());
        check(r.statusCode(), r.body(), r);
        try {
            return r.body().length == 0 ? null : MAPPER.readTree(r.body());
        } catch (IOException e) {
            return null;
        }
    }

    /** {@code GET path} streamed into {@code out}; returns the bytes copied. */
    public long download(String path, OutputStream out) throws IOException {
        HttpResponse<InputStream> r = send(request(path).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            if (r.statusCode() >= 400) {
                check(r.statusCode(), in.readNBytes(64 * 1024), r);
            }
            return in.transferTo(out);
        }
    }

    /**
     * A call answered with Server-Sent Events ({@code Accept: text/event-stream}): each event goes
     * to {@code onEvent} as it arrives, on this thread, until the hub ends the stream.
     *
     * @throws ApiError when the hub answers with an error status instead of a stream
     */
    public void events(String method, String path, Object body, Consumer<Sse.Event> onEvent) throws IOException {
        HttpRequest.Builder b = request(path).header("Accept", "text/event-stream");
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json(body)));
        }
        HttpResponse<InputStream> r = send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            if (r.statusCode() >= 400) {
                check(r.statusCode(), in.readNBytes(64 * 1024), r);
            }
            String type = r.headers().firstValue("Content-Type").orElse("");
            if (!type.startsWith("text/event-stream")) {
                throw new ClientException(method + " " + path + " answered " + r.statusCode() + " " + type
                        + " instead of an event stream (a hub without streaming for this route?)");
            }
            Sse.read(in, onEvent);
        }
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(settings.url() + path))
                .header("Authorization", "Bearer " + settings.apiKey())
                .header("User-Agent", "agentbox-cli");
    }

    private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        try {
            return http.send(request, handler);
        } catch (IOException e) {
            // the JDK's exceptions often carry no message (a refused connection is a bare ConnectException)
            Throwable cause = e.getCause();
            throw new ClientException("cannot reach the hub at " + settings.url() + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())
                    + (cause == null ? "" : " (" + cause + ")"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClientException("interrupted");
        }
    }

    /** Throws the answer's error when its status is 400 or more. */
    private static void check(int status, byte[] body, HttpResponse<?> r) {
        if (status < 400) {
            return;
        }
        String requestId = r.headers().firstValue("X-Request-Id").orElse(null);
        String code = "http_" + status;
        String message = new String(body, StandardCharsets.UTF_8).strip();
        try {
            JsonNode n = MAPPER.readTree(body);
            JsonNode error = n == null ? null : n.get("error");
            if (error != null && error.isObject()) {
                code = error.path("code").asText(code);
                message = error.path("message").asText(message);
                requestId = error.path("requestId").asText(requestId);
            } else if (n != null && n.path("message").isTextual()) { // another surface's {"message"}
                message = n.get("message").asText();
            }
        } catch (IOException e) {
            // not JSON: keep the text
        }
        if (message.isEmpty()) {
            message = "HTTP " + status;
        }
        if (status == 404 && message.startsWith("no route for ")) {
            message += "; this hub does not serve that route (an older hub?)";
        }
        throw new ApiError(status, code, message, requestId);
    }

    private static String json(Object body) {
        try {
            return body instanceof String s ? s : MAPPER.writeValueAsString(body);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
