package io.agentbox.manager.routing;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.HubTunnels;
import io.grpc.Channel;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Routes over the hub's tunnels: a sandbox's cluster gets its worker's tunnel channel; a new
 * sandbox goes to the connected cluster with the most idle sandboxes of the template (see
 * {@link #pickCluster}). A cluster whose tunnel is down is out of routing at once, and so is a
 * cluster whose last report says the template's image is not ready there.
 */
public final class TunnelClusterRouter implements ClusterRouter {
    /** A cluster whose last capacity report (every 2 s) is older than this is out of placement. */
    public static final Duration DEFAULT_REPORT_MAX_AGE = Duration.ofSeconds(6);

    private final HubTunnels tunnels;
    private final Duration reportMaxAge;

    public TunnelClusterRouter(HubTunnels tunnels) {
        this(tunnels, DEFAULT_REPORT_MAX_AGE);
    }

    /** @param reportMaxAge clusters that reported (or connected) longer ago than this get no new sandboxes */
    public TunnelClusterRouter(HubTunnels tunnels, Duration reportMaxAge) {
        this.tunnels = tunnels;
        this.reportMaxAge = reportMaxAge;
    }

    @Override
    public Channel channel(String clusterId) {
        return clusterId != null && tunnels.registry().isConnected(clusterId) ? tunnels.channel(clusterId) : null;
    }

    @Override
    public Collection<String> connectedClusters() {
        return tunnels.registry().connected().stream().map(ClusterTunnel::clusterId).toList();
    }

    /**
     * The connected cluster with the most idle sandboxes of {@code template} (clusters that run its
     * pool first; ties broken at random), counting the claim against that cluster's idle count
     * until its next capacity report, so a burst of creates spreads by capacity. A cluster whose
     * last report is older than the report max age (a silent worker: frozen, or its link stalled)
     * is skipped, though its tunnel may still look open.
     */
    @Override
    public String pickCluster(String template) {
        return pickCluster(template, Set.of());
    }

    @Override
    public synchronized String pickCluster(String template, Set<String> excluded) {
        Instant oldest = Instant.now().minus(reportMaxAge);
        List<ClusterTunnel> connected = new ArrayList<>(tunnels.registry().connected());
        connected.removeIf(t -> t.lastSeen().isBefore(oldest) || excluded.contains(t.clusterId()) || !ready(t, template));
        Collections.shuffle(connected);
        String picked = connected.stream()
                .max(Comparator.<ClusterTunnel>comparingInt(t -> t.hasPool(template) ? 1 : 0)
                        .thenComparingInt(t -> t.idle(template)))
                .map(ClusterTunnel::clusterId)
                .orElse(null);
        if (picked != null) {
            tunnels.registry().noteClaim(picked, template);
        }
        return picked;
    }

    /** False when the cluster's last report says the template's image is not ready there (pulling or error). */
    private static boolean ready(ClusterTunnel t, String template) {
        for (PoolCapacity p : t.pools()) {
            if (p.getTemplate().equals(template)) {
                return PoolReadiness.isReady(p);
            }
        }
        return true; // no report of this pool yet: the worker decides (see ClusterRouter#notReady)
    }

    @Override
    public String notReady(String template, String image, String onlyCluster) {
        TemplateReadiness.Status s = TemplateReadiness.of(tunnels.registry(), template, image,
                c -> onlyCluster == null || onlyCluster.equals(c));
        return s.status() == null || s.ready() ? null
                : PoolReadiness.notReady(template, s.message());
    }

    /** Time since the cluster's tunnel last delivered anything; pings it when it has been quiet for 0.5 s. */
    @Override
    public Duration probeSilence(String clusterId) {
        MuxSession s = tunnels.registry().session(clusterId);
        if (s == null) {
            return Duration.ofDays(1);
        }
        Duration silence = s.silence();
        if (silence.toMillis() >= 500) {
            s.ping(); // a live worker answers within a round trip, which resets the silence
        }
        return silence;
    }
}
