package io.agentbox.manager.http.route;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.HttpIo;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * What an endpoint answers: JSON ({@code json} set), other bytes ({@code contentType} +
 * {@code bytes}) or nothing (an empty body with {@code Content-Length: 0}, which E2B clients need
 * on an empty 2xx: docs/e2b-wire.md#empty-responses), plus extra headers.
 *
 * @param status HTTP status
 */
public record Reply(int status, JsonNode json, String contentType, byte[] bytes, Map<String, String> headers) {
    public static Reply json(int status, JsonNode body) {
        return new Reply(status, body, null, null, Map.of());
    }

    /** 204 with no body. */
    public static Reply noContent() {
        return empty(204);
    }

    /** {@code status} with an empty body and {@code Content-Length: 0}. */
    public static Reply empty(int status) {
        return new Reply(status, null, null, null, Map.of());
    }

    public static Reply bytes(int status, String contentType, byte[] bytes) {
        return new Reply(status, null, contentType, bytes, Map.of());
    }

    /** This reply with one more header (a null value adds nothing). */
    public Reply withHeader(String name, String value) {
        if (value == null) {
            return this;
        }
        Map<String, String> h = new LinkedHashMap<>(headers);
        h.put(name, value);
        return new Reply(status, json, contentType, bytes, Map.copyOf(h));
    }

    /** Writes the reply and completes {@code callback}. */
    public void write(Response response, Callback callback) {
        headers.forEach((k, v) -> response.getHeaders().put(k, v));
        if (json != null) {
            HttpIo.json(response, callback, status, json);
        } else if (bytes != null) {
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
            response.write(true, ByteBuffer.wrap(bytes), callback);
        } else {
            HttpIo.empty(response, callback, status);
        }
    }
}
