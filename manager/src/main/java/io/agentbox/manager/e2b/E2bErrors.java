package io.agentbox.manager.e2b;

import io.agentbox.manager.http.ApiException;
import io.agentbox.protocol.ErrorReason;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.regex.Pattern;

/**
 * The E2B control plane's one mapping from a worker's error to HTTP. The worker's
 * {@link ErrorReason} decides; the gRPC code is the fallback for errors without one. Bodies are
 * E2B's {@code {"code": status, "message": …}}, which the SDK reads for 404s
 * (docs/e2b-wire.md#control-plane-errors); the message keeps the worker's description.
 *
 * <pre>
 * reason                                    status
 * SANDBOX_NOT_FOUND, PROCESS_NOT_FOUND,
 * PATH_NOT_FOUND, TEMPLATE_NOT_FOUND,
 * SNAPSHOT_NOT_FOUND, BUILD_NOT_FOUND,
 *   BLOB_NOT_FOUND                           404
 * SANDBOX_PAUSED, SANDBOX_CONFLICT          409
 * TEMPLATE_NOT_READY, NO_CAPACITY           503 (the SDK's ServiceBusyError)
 * LIMIT_REACHED                             429
 * NO_SPACE                                  507
 * code (no reason): INVALID_ARGUMENT, FAILED_PRECONDITION 400; NOT_FOUND 404; ALREADY_EXISTS,
 * ABORTED 409; PERMISSION_DENIED 403; RESOURCE_EXHAUSTED 503; UNAVAILABLE 503;
 * DEADLINE_EXCEEDED 504; UNIMPLEMENTED 501; anything else 500
 * </pre>
 */
public final class E2bErrors {
    private E2bErrors() {}

    /** The HTTP status for a worker error. */
    public static int status(StatusRuntimeException e) {
        ErrorReason reason = ErrorReason.of(e).orElse(null);
        if (reason != null) {
            return switch (reason) {
                case SANDBOX_NOT_FOUND, PROCESS_NOT_FOUND, PATH_NOT_FOUND, TEMPLATE_NOT_FOUND, SNAPSHOT_NOT_FOUND,
                     BUILD_NOT_FOUND, BLOB_NOT_FOUND -> 404;
                case SANDBOX_PAUSED, SANDBOX_CONFLICT -> 409;
                case TEMPLATE_NOT_READY, NO_CAPACITY -> 503;
                case LIMIT_REACHED -> 429;
                case NO_SPACE -> 507;
            };
        }
        return switch (e.getStatus().getCode()) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400;
            case NOT_FOUND -> 404;
            case ALREADY_EXISTS, ABORTED -> 409;
            case PERMISSION_DENIED -> 403;
            case RESOURCE_EXHAUSTED, UNAVAILABLE -> 503;
            case DEADLINE_EXCEEDED -> 504;
            case UNIMPLEMENTED -> 501;
            default -> 500;
        };
    }

    /**
     * {@code e} as an E2B error: {@code what} names the operation ("kill sandbox"), followed by the
     * worker's description.
     */
    public static ApiException fromWorker(StatusRuntimeException e, String what) {
        Status s = e.getStatus();
        int status = status(e);
        String detail = s.getDescription() != null ? s.getDescription() : s.getCode().name();
        if (status >= 500) { // a worker's internal failure may name its files (cgroups, layers): not the client's business
            detail = withoutHostPaths(detail);
        }
        String message = switch (s.getCode()) {
            case DEADLINE_EXCEEDED -> what + ": the worker did not answer in time";
            case UNAVAILABLE -> what + ": worker unavailable: " + detail;
            default -> status >= 500 && status != 503 && status != 507 ? what + " failed: " + detail : what + ": " + detail;
        };
        return ApiException.e2b(status, message);
    }

    /** Absolute paths of two or more segments ({@code /sys/fs/cgroup/...}, a worker's data directory). */
    private static final Pattern HOST_PATH = Pattern.compile("(?<![\\w.])(/[\\w.@:+-]+){2,}/?");

    /** {@code message} with every absolute host path replaced by {@code <host path>} (the worker's log keeps them). */
    static String withoutHostPaths(String message) {
        return HOST_PATH.matcher(message).replaceAll("<host path>");
    }

    /** Whether the worker says the sandbox itself is gone (not a process or path inside it). */
    public static boolean sandboxGone(StatusRuntimeException e) {
        return ErrorReason.SANDBOX_NOT_FOUND.in(e);
    }
}
