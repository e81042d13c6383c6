package io.agentbox.manager.routing;

import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.HubTunnels;
import io.grpc.Channel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * Routes over the hub's tunnels: a sandbox's cluster gets its worker's tunnel channel; a new
 * sandbox goes to the connected cluster with the most idle sandboxes of the template (see
 * {@link #pickCluster}). A cluster whose tunnel is down is out of routing at once.
 */
public final class TunnelClusterRouter implements ClusterRouter {
    private final HubTunnels tunnels;

    public TunnelClusterRouter(HubTunnels tunnels) {
        this.tunnels = tunnels;
    }

    @Override
    public Channel channel(String clusterId) {
        return clusterId != null && tunnels.registry().isConnected(clusterId) ? tunnels.channel(clusterId) : null;
    }

    @Override
    public java.util.Collection<String> connectedClusters() {
        return tunnels.registry().connected().stream().map(ClusterTunnel::clusterId).toList();
    }

    /**
     * The connected cluster with the most idle sandboxes of {@code template} (clusters that run its
     * pool first; ties broken at random), counting the claim against that cluster's idle count
     * until its next capacity report, so a burst of creates spreads by capacity.
     */
    @Override
    public synchronized String pickCluster(String template) {
        List<ClusterTunnel> connected = new ArrayList<>(tunnels.registry().connected());
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
}
