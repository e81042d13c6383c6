package io.agentbox.manager.envd;

import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.api.Limits;
import io.agentbox.manager.api.ApiStore;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.WorkerServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** What the envd handlers share: store, limits, keepalive timer, and the "sandbox gone" logic. */
final class EnvdContext {
    /** Deadline of unary worker calls when the client sent no {@code Connect-Timeout-Ms}. */
    static final long DEFAULT_UNARY_TIMEOUT_MS = 60_000;
    /** Deadline of the liveness probe used to tell "sandbox gone" from "path/pid not found". */
    static final long PROBE_TIMEOUT_MS = 5_000;

    final ApiStore store;
    final Limits limits;
    final ScheduledExecutorService timer;

    EnvdContext(ApiStore store, Limits limits, ScheduledExecutorService timer) {
        this.store = store;
        this.limits = limits;
        this.timer = timer;
    }

    /**
     * The E2B proxy answer for an unknown or dead sandbox (e2b-protocol.md §4.5): HTTP 502
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
     * True when the worker no longer knows the sandbox (killed or timed out there); records that.
     * Used after a {@code NOT_FOUND} whose subject (sandbox, pid or path) is ambiguous.
     */
    boolean sandboxGone(SandboxTarget target) {
        try {
            WorkerServiceGrpc.newBlockingStub(target.channel())
                    .withDeadlineAfter(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .getSandbox(SandboxRef.newBuilder().setSandboxId(target.sandboxId()).build());
            return false;
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                store.markEnded(target.sandboxId(), "gone");
                return true;
            }
            return false;
        }
    }

    /**
     * Maps a worker error of a unary call: a {@code NOT_FOUND} for a sandbox that is gone becomes
     * the 502 proxy error; everything else the matching Connect error.
     */
    ApiException rpcError(SandboxTarget target, StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.NOT_FOUND && sandboxGone(target)) {
            return sandboxNotFound(target.sandboxId());
        }
        return ConnectError.fromGrpc(e.getStatus()).toException();
    }
}
