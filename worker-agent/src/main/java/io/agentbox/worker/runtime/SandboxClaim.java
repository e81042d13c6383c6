package io.agentbox.worker.runtime;

/**
 * A claimed sandbox as a runtime that keeps its own pools records it with the sandbox (on the
 * pod, for {@code kubernetes}) so that a restarted worker can adopt it again
 * ({@link PoolContext#adopt}): the pool's name for it plus the {@link ClaimRequest}.
 *
 * @param sandboxId the id the new sandbox gets (DNS-label safe, see SandboxIds)
 * @param template hub template name
 * @param owner the claiming team or key, may be empty
 * @param startedAtMs claim time, epoch ms
 * @param endAtMs when the sandbox expires, epoch ms
 */
public record SandboxClaim(String sandboxId, String template, String owner, long startedAtMs, long endAtMs) {}
