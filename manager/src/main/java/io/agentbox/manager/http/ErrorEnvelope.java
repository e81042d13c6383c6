package io.agentbox.manager.http;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The native API's error body, {@code {"error": {"code", "message", "requestId"?}}}
 * (docs/native-api.md#errors): built here so that errors Jetty raises before any handler runs
 * ({@link JsonErrorHandler}) answer {@code /v1} paths in the same shape as the handlers do.
 */
public final class ErrorEnvelope {
    /** Path prefix of the native API. */
    public static final String NATIVE_PREFIX = "/v1/";

    private ErrorEnvelope() {}

    /** The envelope's {@code code} for an HTTP status (an unlisted 4xx is {@code bad_request}, 5xx {@code internal}). */
    public static String code(int status) {
        return switch (status) {
            case 400 -> "bad_request";
            case 401 -> "unauthorized";
            case 403 -> "forbidden";
            case 404 -> "not_found";
            case 405 -> "method_not_allowed";
            case 408 -> "request_timeout";
            case 409 -> "conflict";
            case 413 -> "payload_too_large";
            case 414 -> "uri_too_long";
            case 415 -> "unsupported_media_type";
            case 429 -> "too_many_requests";
            case 431 -> "request_header_fields_too_large";
            case 501 -> "not_implemented";
            case 502 -> "bad_gateway";
            case 503 -> "unavailable";
            case 504 -> "gateway_timeout";
            case 507 -> "insufficient_storage";
            default -> status >= 500 ? "internal" : "bad_request";
        };
    }

    /** {@code {"error": {code, message, requestId?}}}; {@code requestId} null leaves it out. */
    public static ObjectNode of(int status, String message, String requestId) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ObjectNode err = out.putObject("error");
        err.put("code", code(status));
        err.put("message", message);
        if (requestId != null) {
            err.put("requestId", requestId);
        }
        return out;
    }
}
