package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.grpc.Status;
import java.util.Locale;

/**
 * A Connect error: code name plus message (docs/e2b-wire.md#connect-error-codes). Unary errors are HTTP
 * {@link #httpStatus()} with body {@code {"code":"…","message":"…"}}; stream errors go in the
 * end-of-stream envelope as {@code {"error":{…}}}.
 *
 * @param code Connect code name, e.g. {@code not_found}
 */
public record ConnectError(String code, String message) {
    public static final String CANCELED = "canceled";
    public static final String INVALID_ARGUMENT = "invalid_argument";
    public static final String DEADLINE_EXCEEDED = "deadline_exceeded";
    public static final String NOT_FOUND = "not_found";
    public static final String UNAUTHENTICATED = "unauthenticated";
    public static final String UNIMPLEMENTED = "unimplemented";
    public static final String UNAVAILABLE = "unavailable";
    public static final String INTERNAL = "internal";
    public static final String RESOURCE_EXHAUSTED = "resource_exhausted";
    public static final String FAILED_PRECONDITION = "failed_precondition";
    public static final String ABORTED = "aborted";

    public static ConnectError of(String code, String message) {
        return new ConnectError(code, message);
    }

    /** Same name as the gRPC code in lower case (gRPC {@code CANCELLED} is Connect {@code canceled}). */
    public static ConnectError fromGrpc(Status status) {
        String code = status.getCode() == Status.Code.CANCELLED ? CANCELED
                : status.getCode().name().toLowerCase(Locale.ROOT);
        String message = status.getDescription() != null ? status.getDescription() : status.getCode().name();
        return new ConnectError(code, message);
    }

    /** HTTP status of a unary error with this code (Connect spec; docs/e2b-wire.md#connect-error-codes). */
    public int httpStatus() {
        switch (code) {
            case CANCELED: return 499;
            case INVALID_ARGUMENT: case "failed_precondition": case "out_of_range": return 400;
            case DEADLINE_EXCEEDED: return 504;
            case NOT_FOUND: return 404;
            case "already_exists": case "aborted": return 409;
            case "permission_denied": return 403;
            case RESOURCE_EXHAUSTED: return 429;
            case UNIMPLEMENTED: return 501;
            case UNAVAILABLE: return 503;
            case UNAUTHENTICATED: return 401;
            default: return 500;
        }
    }

    public ObjectNode toJson() {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("code", code);
        node.put("message", message);
        return node;
    }

    /** As a unary error response. */
    public ApiException toException() {
        return new ApiException(httpStatus(), toJson());
    }
}
