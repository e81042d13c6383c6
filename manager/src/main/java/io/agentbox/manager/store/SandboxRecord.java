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
 */
public record SandboxRecord(String sandboxId, String clusterId, String template, String team,
                            Map<String, String> metadata, long createdAtMs, long endAtMs,
                            boolean ended, String endReason) {
    public SandboxRecord {
        metadata = Map.copyOf(metadata == null ? Map.of() : metadata);
    }

    /** This record with a new deadline (Unix epoch milliseconds). */
    public SandboxRecord withEndAt(long endAtMs) {
        return new SandboxRecord(sandboxId, clusterId, template, team, metadata, createdAtMs, endAtMs, ended, endReason);
    }

    /** This record ended at {@code atMs} for {@code reason}; its deadline moves to {@code atMs} if that is earlier. */
    public SandboxRecord endedAt(long atMs, String reason) {
        return new SandboxRecord(sandboxId, clusterId, template, team, metadata, createdAtMs, Math.min(endAtMs, atMs),
                true, reason);
    }
}
