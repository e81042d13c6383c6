package io.agentbox.worker.runtime;

/**
 * Who claims a sandbox and until when, as the worker decided it once for the create: the pool
 * names the sandbox and records these terms where the runtime keeps claims ({@link SandboxClaim}).
 *
 * @param owner the claiming team or key, may be empty
 * @param startedAtMs claim time, epoch ms
 * @param endAtMs when the sandbox is killed, epoch ms (after {@code startedAtMs})
 */
public record ClaimRequest(String owner, long startedAtMs, long endAtMs) {
    public ClaimRequest {
        if (owner == null) {
            throw new IllegalArgumentException("owner must not be null (empty for none)");
        }
        if (endAtMs <= startedAtMs) {
            throw new IllegalArgumentException("end " + endAtMs + " is not after start " + startedAtMs);
        }
    }
}
