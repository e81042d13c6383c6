package io.agentbox.manager.envd;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.protocol.ErrorReason;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** What the envd handlers share: store, limits, keepalive timer, and the "sandbox gone" logic. */
final class EnvdContext {
    /** Deadline of unary worker calls when the client sent no {@code Connect-Timeout-Ms}. */
    static final long DEFAULT_UNARY_TIMEOUT_MS = 60_000;

    final ApiStore store;
    final Limits limits;
    final ScheduledExecutorService timer;
    private final ClusterRouter router;
    /** Streams being relayed now, ended with an error naming the cause when the hub shuts down. */
    final Set<StreamRelay<?>> relays = ConcurrentHashMap.newKeySet();

    EnvdContext(ApiStore store, Limits limits, ScheduledExecutorService timer, ClusterRouter router) {
        this.store = store;
        this.limits = limits;
        this.timer = timer;
        this.router = router;
    }

    /**
     * Ends every open stream with {@code aborted} "the hub is shutting down" and cancels its worker call.
     *
     * @return how many streams were ended
     */
    int shutdownStreams() {
        int n = 0;
        for (StreamRelay<?> r : relays) {
            r.abort(ConnectError.of(ConnectError.ABORTED, "the AgentBox hub is shutting down; the stream of sandbox "
                    + r.sandboxId() + " ended; a command may still run in the sandbox (commands.connect to its pid once the hub is back)"));
            n++;
        }
        return n;
    }

    /**
     * The Connect error for an operation on a sandbox whose worker cluster is not connected:
     * {@code failed_precondition} naming the cluster (not {@code unavailable}, which the E2B SDK
     * reports as a sandbox timeout).
     */
    static ConnectError clusterDisconnected(String sandboxId, String clusterId) {
        return ConnectError.of(ConnectError.FAILED_PRECONDITION, "sandbox " + sandboxId + " is unreachable: its worker cluster '"
                + clusterId + "' is disconnected from the hub; retry once the cluster reconnects");
    }

    /**
     * The Connect error for a worker call that failed: when it failed because the sandbox's
     * cluster disconnected meanwhile, {@code aborted} saying so; else the gRPC status as is.
     */
    ConnectError workerError(SandboxTarget target, Status status) {
        if (status.getCode() == Status.Code.UNAVAILABLE && router.channel(target.record().clusterId()) == null) {
            return ConnectError.of(ConnectError.ABORTED, "worker cluster '" + target.record().clusterId()
                    + "' disconnected from the hub during the call on sandbox " + target.sandboxId()
                    + "; its outcome is unknown (" + (status.getDescription() != null ? status.getDescription()
                    : status.getCode().name()) + ")");
        }
        return ConnectError.fromGrpc(status);
    }

    /**
     * The E2B proxy answer for an unknown or dead sandbox (docs/e2b-wire.md#unknown-sandbox): HTTP 502
     * {@code {"sandboxId":…,"message":"The sandbox was not found","code":502}}.
     */
    static ApiException sandboxNotFound(String sandboxId) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("sandboxId", sandboxId);
        body.put("message", "The sandbox was not found");
        body.put("code", 502);
        return new ApiException(502, body);
    }

    /**
     * Whether a worker error says the sandbox itself cannot be reached through envd: gone (killed
     * or timed out on the worker, which is recorded here) or paused. E2B answers both with the
     * proxy's 502 (docs/e2b-wire.md#pause). Decided by the worker's {@link ErrorReason},
     * not by asking again.
     */
    boolean sandboxUnreachable(SandboxTarget target, Throwable error) {
        ErrorReason reason = ErrorReason.of(error).orElse(null);
        if (reason == ErrorReason.SANDBOX_NOT_FOUND) {
            store.markEnded(target.sandboxId(), "gone");
            return true;
        }
        return reason == ErrorReason.SANDBOX_PAUSED;
    }

    /**
     * Maps a worker error of a unary call: a sandbox that is gone or paused becomes the 502 proxy
     * error; everything else the matching Connect error.
     */
    ApiException rpcError(SandboxTarget target, StatusRuntimeException e) {
        if (sandboxUnreachable(target, e)) {
            return sandboxNotFound(target.sandboxId());
        }
        return workerError(target, e.getStatus()).toException();
    }
}
