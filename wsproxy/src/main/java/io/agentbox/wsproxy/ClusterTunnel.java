package io.agentbox.wsproxy;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.v1.PoolCapacity;
import java.time.Instant;
import java.util.ArrayList;
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
 * @param sandboxes live sandboxes the worker last reported ({@code CapacityReport.sandboxes}): idle,
 *     starting, claimed and being removed; 0 until the first report
 */
public record ClusterTunnel(String clusterId, MuxSession session, Instant connectedSince, Instant lastSeen,
                            List<PoolCapacity> pools, Map<String, Long> appliedVersions, int sandboxes) {

    /** A cluster that has just connected and reported nothing yet. */
    public static ClusterTunnel connected(String clusterId, MuxSession session, Instant at) {
        return new ClusterTunnel(clusterId, session, at, at, List.of(), Map.of(), 0);
    }

    public ClusterTunnel withReport(List<PoolCapacity> newPools, Map<String, Long> applied, int live, Instant at) {
        return new ClusterTunnel(clusterId, session, connectedSince, at, List.copyOf(newPools), Map.copyOf(applied), live);
    }

    /**
     * The same report with one idle sandbox of {@code template} fewer (not below 0): a claim the hub
     * just routed here, so that claims between two reports spread over the clusters instead of all
     * going to the one that reported the most.
     */
    public ClusterTunnel withClaim(String template) {
        List<PoolCapacity> next = new ArrayList<>(pools.size());
        for (PoolCapacity p : pools) {
            next.add(p.getTemplate().equals(template) && p.getIdle() > 0
                    ? p.toBuilder().setIdle(p.getIdle() - 1).setRunning(p.getRunning() + 1).build() : p);
        }
        return new ClusterTunnel(clusterId, session, connectedSince, lastSeen, List.copyOf(next), appliedVersions,
                sandboxes);
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
