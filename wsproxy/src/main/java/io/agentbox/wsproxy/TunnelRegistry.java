package io.agentbox.wsproxy;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.sync.ConnectedClusters;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's map of connected clusters. A cluster has at most one live session: a new tunnel for the
 * same cluster replaces (and closes) the old one, and a session that ends removes its entry only if
 * it is still the current one, so a late close of a replaced session cannot unregister its successor.
 */
public final class TunnelRegistry implements ConnectedClusters {
    private static final Logger log = LoggerFactory.getLogger(TunnelRegistry.class);

    private final ConcurrentMap<String, ClusterTunnel> tunnels = new ConcurrentHashMap<>();
    /** The cluster id each open session authenticated as at its upgrade; what sync calls are bound to. */
    private final ConcurrentMap<MuxSession, String> authenticatedAs = new ConcurrentHashMap<>();
    private final Clock clock;
    private final List<Consumer<String>> connectListeners = new CopyOnWriteArrayList<>();

    public TunnelRegistry(Clock clock) {
        this.clock = clock;
    }

    /**
     * Registers a freshly opened session and arranges its removal when it ends.
     *
     * @param clusterId the id the session's upgrade authenticated (header checked against its token)
     */
    public void register(String clusterId, MuxSession session) {
        authenticatedAs.put(session, clusterId);
        ClusterTunnel fresh = ClusterTunnel.connected(clusterId, session, clock.instant());
        ClusterTunnel previous = tunnels.put(clusterId, fresh);
        if (previous != null && previous.session() != session) {
            log.info("cluster {} reconnected; closing its previous tunnel", clusterId);
            previous.session().close();
        }
        log.info("cluster {} connected", clusterId);
        connectListeners.forEach(l -> l.accept(clusterId));
        session.closeFuture().whenComplete((v, e) -> {
            authenticatedAs.remove(session);
            if (tunnels.computeIfPresent(clusterId, (id, t) -> t.session() == session ? null : t) == null) {
                log.info("cluster {} disconnected", clusterId);
            }
        });
    }

    /**
     * The cluster id {@code session} authenticated as, or null when it is not an open tunnel
     * session of this registry. Streams the worker opens carry their session (see
     * {@link io.agentbox.mux.MuxStreamAddress#session()}), so a call can be bound to its tunnel.
     */
    @Override
    public String authenticatedCluster(MuxSession session) {
        return session == null ? null : authenticatedAs.get(session);
    }

    /** Registers a callback run with the cluster id each time a cluster (re)connects; must not block. */
    public void addConnectListener(Consumer<String> listener) {
        connectListeners.add(listener);
    }

    /** The live session of a cluster, or null when it is not connected. */
    public MuxSession session(String clusterId) {
        ClusterTunnel t = tunnels.get(clusterId);
        return t == null || !t.session().isOpen() ? null : t.session();
    }

    public ClusterTunnel get(String clusterId) {
        return tunnels.get(clusterId);
    }

    @Override
    public boolean isConnected(String clusterId) {
        return session(clusterId) != null;
    }

    /** Records a capacity report; ignored when the cluster is not connected. */
    public void report(String clusterId, Collection<PoolCapacity> pools) {
        report(clusterId, pools, Map.of(), 0);
    }

    /**
     * Records a capacity report with the worker's applied watch versions and live sandboxes; ignored
     * when the cluster is not connected.
     */
    @Override
    public void report(String clusterId, Collection<PoolCapacity> pools, Map<String, Long> appliedVersions, int sandboxes) {
        tunnels.computeIfPresent(clusterId,
                (id, t) -> t.withReport(new ArrayList<>(pools), appliedVersions, sandboxes, clock.instant()));
    }

    /** Counts a claim routed to a cluster until its next report (see {@link ClusterTunnel#withClaim}). */
    public void noteClaim(String clusterId, String template) {
        tunnels.computeIfPresent(clusterId, (id, t) -> t.withClaim(template));
    }

    /** Snapshot of the connected clusters. */
    public List<ClusterTunnel> connected() {
        List<ClusterTunnel> out = new ArrayList<>();
        for (ClusterTunnel t : tunnels.values()) {
            if (t.session().isOpen()) {
                out.add(t);
            }
        }
        return out;
    }
}
