package io.agentbox.worker.runtime;

/**
 * Who claims a sandbox and for how long, as a {@link PoolingRuntime} records it with the sandbox
 * (on the pod, for {@code kubernetes}) so that a restarted worker can adopt it again.
 *
 * @param sandboxId the id the new sandbox gets (DNS-label safe, see SandboxIds)
 * @param template hub template name
 * @param owner the claiming team or key, may be empty
 * @param startedAtMs claim time, epoch ms
 * @param endAtMs when the sandbox expires, epoch ms
 */
public record SandboxClaim(String sandboxId, String template, String owner, long startedAtMs, long endAtMs) {}
