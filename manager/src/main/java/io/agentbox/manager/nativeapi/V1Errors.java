package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.E2bErrors;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.ErrorEnvelope;
import io.agentbox.manager.store.StoreException;
import io.grpc.StatusRuntimeException;
import java.util.function.Supplier;

/**
 * The native API's one error model. Everything below the handler throws {@link ApiException}
 * (whatever its body's shape: the shared cores answer E2B's) or a worker's
 * {@link StatusRuntimeException}; the handler turns either into the envelope
 *
 * <pre>{"error": {"code": "not_found", "message": "sandbox abc not found", "requestId": "…"}}</pre>
 *
 * with the status kept and {@code code} named after it ({@link #code}). Worker errors go through
 * the same status mapping as the E2B surface ({@link E2bErrors#status}: the worker's
 * {@code ErrorReason} first, the gRPC code as fallback).
 */
public final class V1Errors {
    private V1Errors() {}

    /** The envelope's {@code code} for an HTTP status ({@link ErrorEnvelope#code}). */
    public static String code(int status) {
        return ErrorEnvelope.code(status);
    }

    /** An error with {@code status} and {@code message}, answered as the envelope. */
    public static ApiException of(int status, String message) {
        return ApiException.e2b(status, message);
    }

    /** A worker's error of {@code what} ("run command"), mapped as on every surface. */
    public static ApiException fromWorker(StatusRuntimeException e, String what) {
        return E2bErrors.fromWorker(e, what);
    }

    /**
     * Runs a hub store call, answering its refusals as errors: invalid argument 400, not found 404,
     * conflict 409 (with the store's message); a store failure is 500 with its details in the log only.
     */
    static <T> T store(Supplier<T> call) {
        try {
            return call.get();
        } catch (StoreException e) {
            if (e.httpStatus() == 500) {
                throw e; // the handler logs it and answers 500 without the store's message
            }
            throw of(e.httpStatus(), e.getMessage());
        }
    }

    /** The envelope for {@code e} (its status; the message of its body, whatever the body's shape). */
    public static ObjectNode envelope(ApiException e, String requestId) {
        String message = e.body().path("message").asText("");
        if (message.isEmpty()) {
            message = e.getMessage() == null || e.getMessage().isEmpty() ? code(e.status()) : e.getMessage();
        }
        return envelope(e.status(), message, requestId);
    }

    public static ObjectNode envelope(int status, String message, String requestId) {
        return ErrorEnvelope.of(status, message, requestId);
    }
}
