package io.agentbox.manager;

import io.agentbox.manager.api.ApiServer;
import io.agentbox.manager.routing.TunnelClusterRouter;
import io.agentbox.manager.store.HubStore;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.wsproxy.ClusterAuthenticator;
import io.agentbox.wsproxy.HubTunnels;
import io.agentbox.wsproxy.sync.HubWatches;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The hub: store, tunnel endpoint (with the sync services workers call) and the public API.
 * Assembled by {@code agentbox hub} and {@code agentbox standalone}.
 */
public final class Hub implements AutoCloseable {
    private final HubStore store;
    private final HubTunnels tunnels;
    private final ApiServer api;
    private final Optional<String> newAdminKey;

    private Hub(HubStore store, HubTunnels tunnels, ApiServer api, Optional<String> newAdminKey) {
        this.store = store;
        this.tunnels = tunnels;
        this.api = api;
        this.newAdminKey = newAdminKey;
    }

    /**
     * Opens the store under {@code dataDir} (creating the admin key on first start), then starts the
     * tunnel endpoint and the public API. Ports may be 0 (ephemeral).
     */
    public static Hub start(Path dataDir, String apiHost, int apiPort, String tunnelHost, int tunnelPort,
                            ClusterAuthenticator clusterAuth) throws Exception {
        return start(dataDir, apiHost, apiPort, tunnelHost, tunnelPort, clusterAuth, BaseTemplate.UNCHANGED);
    }

    /** As above, first applying command-line settings of the {@code base} template. */
    public static Hub start(Path dataDir, String apiHost, int apiPort, String tunnelHost, int tunnelPort,
                            ClusterAuthenticator clusterAuth, BaseTemplate base) throws Exception {
        HubStore store = HubStore.open(dataDir);
        HubTunnels tunnels = null;
        ApiServer api = null;
        try {
            Optional<String> adminKey = store.ensureAdminKey();
            base.applyTo(store);
            HubWatches watches = HubWatches.empty();
            // Until the store versions its changes, versions start at this start's epoch microseconds, so
            // a worker that applied an earlier hub's version always gets a fresh snapshot from this one.
            watches.templates().reset(System.currentTimeMillis() * 1000, store.templates());
            tunnels = new HubTunnels(tunnelHost, tunnelPort, clusterAuth, watches).start();
            api = new ApiServer(store, new TunnelClusterRouter(tunnels), apiHost, apiPort);
            api.start();
            return new Hub(store, tunnels, api, adminKey);
        } catch (Exception | Error e) {
            if (api != null) {
                api.close();
            }
            if (tunnels != null) {
                tunnels.close();
            }
            store.close();
            throw e;
        }
    }

    public HubStore store() {
        return store;
    }

    public HubTunnels tunnels() {
        return tunnels;
    }

    public int apiPort() {
        return api.port();
    }

    public int tunnelPort() {
        return tunnels.address().getPort();
    }

    /** The admin key's plaintext, present only on the start that created it. */
    public Optional<String> newAdminKey() {
        return newAdminKey;
    }

    @Override
    public void close() {
        api.close();
        tunnels.close();
        store.close();
    }
}
