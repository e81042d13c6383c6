package io.agentbox.wsproxy;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.v1.PoolCapacity;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One connected worker cluster: its live mux session and what it last reported.
 *
 * @param connectedSince when this session opened
 * @param lastSeen when the worker last reported capacity (or connected)
 * @param pools per-template idle / running / capacity from the last report; empty until the first
 * @param appliedVersions resource version the worker reported as applied per watch ("templates",
 *     "api-keys", "config"); empty until the first report
 */
public record ClusterTunnel(String clusterId, MuxSession session, Instant connectedSince, Instant lastSeen,
                            List<PoolCapacity> pools, Map<String, Long> appliedVersions) {

    /** A cluster that has just connected and reported nothing yet. */
    public static ClusterTunnel connected(String clusterId, MuxSession session, Instant at) {
        return new ClusterTunnel(clusterId, session, at, at, List.of(), Map.of());
    }

    public ClusterTunnel withReport(List<PoolCapacity> newPools, Map<String, Long> applied, Instant at) {
        return new ClusterTunnel(clusterId, session, connectedSince, at, List.copyOf(newPools), Map.copyOf(applied));
    }

    /** Idle sandboxes of a template in the last report, 0 when the pool is unknown. */
    public int idle(String template) {
        for (PoolCapacity p : pools) {
            if (p.getTemplate().equals(template)) {
                return p.getIdle();
            }
        }
        return 0;
    }

    public boolean hasPool(String template) {
        return pools.stream().anyMatch(p -> p.getTemplate().equals(template));
    }
}
