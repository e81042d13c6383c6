package io.agentbox.worker.service;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How every worker service answers an error: one mapping for the sandbox, process, filesystem,
 * port, template build and image services (worker_common.proto lists the codes).
 *
 * <p>A {@link StatusRuntimeException} passes as thrown, keeping its {@code agentbox-reason}
 * trailer ({@link io.agentbox.protocol.ErrorReason}, set where the error is known: pools,
 * runtimes, file operations). Any other runtime exception is a bug or an unforeseen failure: it
 * becomes {@code INTERNAL} with the exception's text, and is logged.
 */
public final class WorkerStatus {
    private static final Logger log = LoggerFactory.getLogger(WorkerStatus.class);

    private WorkerStatus() {
    }

    /** The status {@code e} answers with: itself when it is one, else INTERNAL naming it. */
    public static StatusRuntimeException toStatus(RuntimeException e) {
        if (e instanceof StatusRuntimeException s) {
            return s;
        }
        log.warn("unexpected worker error", e);
        return Status.INTERNAL.withDescription(e.toString()).withCause(e).asRuntimeException();
    }

    /** INVALID_ARGUMENT with {@code message} (a malformed request field or request order). */
    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    /** Answers a unary call with {@code body}'s result, or with {@link #toStatus} of what it threw. */
    static <T> void unary(StreamObserver<T> out, Supplier<T> body) {
        T result;
        try {
            result = body.get();
        } catch (RuntimeException e) {
            out.onError(toStatus(e));
            return;
        }
        out.onNext(result);
        out.onCompleted();
    }
}
