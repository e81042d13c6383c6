package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Calls a management API over real HTTP with java.net.http, sending the manager token when one is set. */
final class ManagementClient {
    record Res(int status, JsonNode json, String text, HttpResponse<String> raw) {}

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String base;
    private final String token;

    ManagementClient(int port, String token) {
        this.base = "http://127.0.0.1:" + port;
        this.token = token;
    }

    ManagementClient withToken(String other) {
        return new ManagementClient(Integer.parseInt(base.substring(base.lastIndexOf(':') + 1)), other);
    }

    Res call(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header(ManagementHandler.TOKEN_HEADER, token);
        }
        return send(b.build());
    }

    Res get(String path) throws Exception {
        return call("GET", path, null);
    }

    Res send(HttpRequest request) throws Exception {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        JsonNode json = null;
        if (!r.body().isEmpty() && r.headers().firstValue("Content-Type").orElse("").contains("json")) {
            json = Json.MAPPER.readTree(r.body());
        }
        return new Res(r.statusCode(), json, r.body(), r);
    }

    String base() {
        return base;
    }
}
