package io.agentbox.manager.http;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An error that becomes an HTTP response: {@code status} plus a JSON {@code body}. The body shape
 * depends on the surface: E2B control plane and envd REST use {@code {"code":<int>,"message":…}}
 * (docs/e2b-wire.md#control-plane-errors, docs/e2b-wire.md#files-endpoint); Connect RPCs use {@code {"code":"<connect code>","message":…}} (docs/e2b-wire.md#unary-calls).
 */
public final class ApiException extends RuntimeException {
    private final int status;
    private final transient ObjectNode body;

    public ApiException(int status, ObjectNode body) {
        super(body.path("message").asText(""), null, false, false);
        this.status = status;
        this.body = body;
    }

    /** E2B-shaped error: {@code {"code": status, "message": message}}. */
    public static ApiException e2b(int status, String message) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("code", status);
        body.put("message", message);
        return new ApiException(status, body);
    }

    public int status() {
        return status;
    }

    public ObjectNode body() {
        return body;
    }
}
