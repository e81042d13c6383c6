package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/** A test client of the native API: JSON calls with {@code Authorization: Bearer} and their answers. */
final class V1Client {
    final String base;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    V1Client(String base) {
        this.base = base;
    }

    /** One answer: status, JSON body (null when empty or not JSON), raw text, headers. */
    record Res(int status, JsonNode json, String text, HttpHeaders headers) {
        String requestId() {
            return headers.firstValue("X-Request-Id").orElse(null);
        }

        /** The envelope's {@code error.code}. */
        String code() {
            return json == null ? null : json.path("error").path("code").asText(null);
        }
    }

    Res call(String method, String path, String key, String body) throws Exception {
        return call(method, path, key, body, Map.of());
    }

    Res call(String method, String path, String key, String body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (key != null) {
            b.header("Authorization", "Bearer " + key);
        }
        headers.forEach(b::header);
        return send(b.build());
    }

    Res send(HttpRequest request) throws Exception {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        JsonNode json = null;
        if (!r.body().isEmpty() && r.headers().firstValue("Content-Type").orElse("").contains("json")) {
            json = Json.MAPPER.readTree(r.body());
        }
        return new Res(r.statusCode(), json, r.body(), r.headers());
    }

    HttpClient http() {
        return http;
    }
}
