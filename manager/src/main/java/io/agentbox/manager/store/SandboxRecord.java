package io.agentbox.manager.store;

import java.util.Map;

/**
 * What the hub remembers about a sandbox it created.
 *
 * @param sandboxId  DNS-safe id that embeds the cluster (see {@code io.agentbox.protocol.SandboxIds})
 * @param clusterId  the worker cluster that owns it
 * @param template   template name
 * @param team       owning team (tenancy)
 * @param metadata   user metadata from create (string map, never null)
 * @param createdAtMs creation time, Unix epoch milliseconds
 * @param endAtMs    time the sandbox is killed unless extended, Unix epoch milliseconds
 * @param ended      true once killed or timed out
 * @param endReason  why it ended ({@code killed}, {@code timeout}, {@code gone}), null while running
 * @param lifecycle  create-time auto-pause and auto-resume settings
 * @param pausedAtMs when it was paused, Unix epoch milliseconds; 0 while running (a paused sandbox
 *                   has no deadline: {@code endAtMs} then is the one it had when paused)
 */
public record SandboxRecord(String sandboxId, String clusterId, String template, String team,
                            Map<String, String> metadata, long createdAtMs, long endAtMs,
                            boolean ended, String endReason, SandboxLifecycle lifecycle, long pausedAtMs) {
    public SandboxRecord {
        metadata = Map.copyOf(metadata == null ? Map.of() : metadata);
        lifecycle = lifecycle == null ? SandboxLifecycle.KILL : lifecycle;
    }

    /** A running sandbox killed at its end time (the default lifecycle). */
    public SandboxRecord(String sandboxId, String clusterId, String template, String team, Map<String, String> metadata,
                         long createdAtMs, long endAtMs, boolean ended, String endReason) {
        this(sandboxId, clusterId, template, team, metadata, createdAtMs, endAtMs, ended, endReason, SandboxLifecycle.KILL, 0);
    }

    public boolean paused() {
        return pausedAtMs > 0;
    }

    /** This record with a new deadline (Unix epoch milliseconds). */
    public SandboxRecord withEndAt(long endAtMs) {
        return new SandboxRecord(sandboxId, clusterId, template, team, metadata, createdAtMs, endAtMs, ended, endReason,
                lifecycle, pausedAtMs);
    }

    /** This record paused at {@code atMs} (Unix epoch ms), or with 0 running again with deadline {@code endAtMs}. */
    public SandboxRecord withPause(long atMs, long endAtMs) {
        return new SandboxRecord(sandboxId, clusterId, template, team, metadata, createdAtMs, endAtMs, ended, endReason,
                lifecycle, atMs);
    }

    /** This record ended at {@code atMs} for {@code reason}; its deadline moves to {@code atMs} if that is earlier. */
    public SandboxRecord endedAt(long atMs, String reason) {
        return new SandboxRecord(sandboxId, clusterId, template, team, metadata, createdAtMs, Math.min(endAtMs, atMs),
                true, reason, lifecycle, 0);
    }
}
