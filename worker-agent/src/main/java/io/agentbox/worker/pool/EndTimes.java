package io.agentbox.worker.pool;

import io.agentbox.protocol.SandboxTimeouts;
import io.grpc.Status;

/**
 * When a claimed sandbox ends, decided once: the hub's {@code end_at_ms} as given (only checked
 * against {@link SandboxTimeouts}), else now + the caller's seconds (callers without a record
 * of their own). Nothing is clamped: an end the worker will not honour is refused.
 */
final class EndTimes {
    private EndTimes() {}

    /**
     * @param endAtMs the caller's end, epoch ms; 0 = {@code nowMs + seconds}
     * @param seconds lifetime from now when {@code endAtMs} is 0
     * @return the end, epoch ms
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when the end is not in the future or
     *     too far ahead, or the seconds are out of 1..{@link SandboxTimeouts#MAX_SECONDS}
     */
    static long decide(long endAtMs, long seconds, long nowMs) {
        String bad = endAtMs != 0 ? SandboxTimeouts.checkEndAt(endAtMs, nowMs) : SandboxTimeouts.checkSeconds(seconds);
        if (bad != null) {
            throw Status.INVALID_ARGUMENT.withDescription(bad).asRuntimeException();
        }
        return endAtMs != 0 ? endAtMs : nowMs + seconds * 1000;
    }
}
