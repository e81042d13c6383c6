package io.agentbox.wsproxy.sync;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.v1.PoolCapacity;
import java.util.Collection;
import java.util.Map;

/**
 * What the sync service needs of the hub's tunnels: which cluster a session authenticated as,
 * whether a cluster is connected, and where its capacity reports go. The tunnel registry
 * ({@code io.agentbox.wsproxy.TunnelRegistry}) implements it, so this package does not depend
 * on the package that assembles it.
 */
public interface ConnectedClusters {

    /** The cluster id {@code session} authenticated as, or null when it is not an open tunnel session. */
    String authenticatedCluster(MuxSession session);

    /** True while {@code clusterId} has an open tunnel session. */
    boolean isConnected(String clusterId);

    /**
     * Records a capacity report with the watch versions the worker applied (watch name to
     * resource version) and its count of live sandboxes ({@code CapacityReport.sandboxes}); ignored
     * when the cluster is not connected.
     */
    void report(String clusterId, Collection<PoolCapacity> pools, Map<String, Long> appliedVersions, int sandboxes);
}
