package io.agentbox.manager.store;

/**
 * A registered worker cluster. Its token is stored only as a SHA-256 hash and is not part of this record.
 *
 * @param id              cluster id (DNS-label safe, see {@code io.agentbox.protocol.SandboxIds})
 * @param description     free text
 * @param createdAtMs     Unix epoch milliseconds
 * @param resourceVersion hub-wide version of its last change (registration, token rotation)
 * @param config          what the hub pushes to its worker
 * @param configVersion   hub-wide version of the last config change
 */
public record ClusterRecord(String id, String description, long createdAtMs, long resourceVersion,
                            ClusterConfig config, long configVersion) {}
