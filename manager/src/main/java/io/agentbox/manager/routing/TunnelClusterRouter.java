package io.agentbox.manager.routing;

import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.HubTunnels;
import io.grpc.Channel;
import java.util.Comparator;

/**
 * Routes over the hub's tunnels: a sandbox's cluster gets its worker's tunnel channel; a new
 * sandbox goes to the connected cluster that last reported the most idle sandboxes of the
 * template (clusters that run the template's pool first).
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
    public String pickCluster(String template) {
        return tunnels.registry().connected().stream()
                .max(Comparator.<ClusterTunnel>comparingInt(t -> t.hasPool(template) ? 1 : 0)
                        .thenComparingInt(t -> t.idle(template)))
                .map(ClusterTunnel::clusterId)
                .orElse(null);
    }
}
