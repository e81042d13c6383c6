package io.agentbox.protocol;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Optional;

/**
 * What a worker's error is about, carried beside the gRPC status so the hub maps it to HTTP without
 * guessing (a {@code NOT_FOUND} alone does not say whether the sandbox, the process or the path is
 * missing). Sent as the ASCII trailer {@value #KEY} holding the enum's name; an unknown or absent
 * value reads as empty, so old and new peers still talk.
 *
 * <p>Each API family (E2B control plane, envd REST, envd Connect, native REST) has one mapping from
 * (code, reason) to its status; the reason decides, the code is the fallback.
 */
public enum ErrorReason {
    /** The sandbox id is unknown to the worker or the sandbox has ended. */
    SANDBOX_NOT_FOUND,
    /** The sandbox exists but is paused: envd-style traffic must not reach it. */
    SANDBOX_PAUSED,
    /** The sandbox is in another transition (pausing, snapshotting, resetting) or already in the asked state. */
    SANDBOX_CONFLICT,
    /** No process with that pid or tag runs in the sandbox. */
    PROCESS_NOT_FOUND,
    /** A path inside the sandbox does not exist. */
    PATH_NOT_FOUND,
    /** The template (or snapshot) is unknown on the worker. */
    TEMPLATE_NOT_FOUND,
    /** The template exists but its pool cannot serve yet (pulling, building, error). */
    TEMPLATE_NOT_READY,
    /** The worker or cluster is at its sandbox limit, or a pool has nothing idle. */
    NO_CAPACITY,
    /** A per-sandbox or per-worker limit on processes, watches, streams or connections. */
    LIMIT_REACHED,
    /** The sandbox's disk (its writable layer) is full, or a file is larger than allowed. */
    NO_SPACE,
    /** The snapshot id is unknown. */
    SNAPSHOT_NOT_FOUND,
    /** The template build id is unknown. */
    BUILD_NOT_FOUND,
    /** No image blob of that digest is kept (on the worker asked, or on the hub). */
    BLOB_NOT_FOUND;

    /** Trailer key of the reason. */
    public static final Metadata.Key<String> KEY = Metadata.Key.of("agentbox-reason", Metadata.ASCII_STRING_MARSHALLER);

    /** {@code status} with this reason in its trailers. */
    public StatusRuntimeException toException(Status status) {
        Metadata trailers = new Metadata();
        trailers.put(KEY, name());
        return status.asRuntimeException(trailers);
    }

    /** {@code code} with {@code message} and this reason. */
    public StatusRuntimeException exception(Status.Code code, String message) {
        return toException(Status.fromCode(code).withDescription(message));
    }

    /** The reason carried by {@code t} (a gRPC status exception, or one among its causes), if any. */
    public static Optional<ErrorReason> of(Throwable t) {
        return t == null ? Optional.empty() : of(Status.trailersFromThrowable(t));
    }

    /** Whether {@code t} carries this reason. */
    public boolean in(Throwable t) {
        return of(t).orElse(null) == this;
    }

    /** The reason in {@code trailers}, if any and known. */
    public static Optional<ErrorReason> of(Metadata trailers) {
        if (trailers == null) {
            return Optional.empty();
        }
        String v = trailers.get(KEY);
        if (v == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(valueOf(v));
        } catch (IllegalArgumentException unknown) {
            return Optional.empty();
        }
    }
}
