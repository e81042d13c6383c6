package io.agentbox.manager.store;

import io.agentbox.protocol.v1.Template;
import java.util.List;

/**
 * A stored template.
 *
 * @param spec            what workers receive (name, pool size, runtime, network, timeout, env, resources)
 * @param clusters        cluster ids whose workers run a pool for it; empty = every cluster
 * @param createdAtMs     Unix epoch milliseconds
 * @param updatedAtMs     Unix epoch milliseconds of the last change
 * @param resourceVersion hub-wide version of its last change; pass it back to update or delete
 *                        only if unchanged (optimistic concurrency)
 */
public record TemplateRecord(Template spec, List<String> clusters, long createdAtMs, long updatedAtMs,
                             long resourceVersion) {
    public TemplateRecord {
        clusters = List.copyOf(clusters);
    }

    public String name() {
        return spec.getName();
    }

    /** True when a worker of {@code clusterId} should run this template's pool. */
    public boolean targets(String clusterId) {
        return clusters.isEmpty() || clusters.contains(clusterId);
    }
}
