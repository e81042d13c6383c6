package io.agentbox.manager;

import io.agentbox.manager.builds.TemplateFiles;
import io.agentbox.manager.management.ManagementServer;
import io.agentbox.manager.store.StoreConfig;
import io.agentbox.protocol.TunnelProtocol;
import java.nio.file.Path;

/**
 * Where the hub keeps its state and what it listens on. Ports may be 0 (ephemeral).
 *
 * @param dataDir        admin key and manager token files, and the embedded store when {@code store} is the default
 * @param store          the hub database (the embedded PostgreSQL under {@code dataDir}, an external PostgreSQL, or H2)
 * @param apiHost        address of the public API
 * @param apiPort        port of the public API (default 8080)
 * @param tunnelHost     address of the tunnel endpoint workers dial
 * @param tunnelPort     port of the tunnel endpoint (default 9003)
 * @param managementHost address of the internal management API (default loopback: it manages keys)
 * @param managementPort port of the internal management API (default 9004)
 * @param base           command-line settings of the {@code base} template
 * @param maxUploadBytes largest COPY archive a template build may upload (default 1 GiB)
 */
public record HubConfig(Path dataDir, StoreConfig store, String apiHost, int apiPort, String tunnelHost, int tunnelPort,
                        String managementHost, int managementPort, BaseTemplate base, String presetAdminKey,
                        long maxUploadBytes) {
    public static final String DEFAULT_MANAGEMENT_HOST = "127.0.0.1";

    /** The production defaults: the embedded PostgreSQL under {@code dataDir}, API on 0.0.0.0:8080, tunnels on 0.0.0.0:9003, management on 127.0.0.1:9004. */
    public static HubConfig defaults(Path dataDir) {
        return new HubConfig(dataDir, StoreConfig.embedded(dataDir), "0.0.0.0", 8080, "0.0.0.0", TunnelProtocol.DEFAULT_PORT,
                DEFAULT_MANAGEMENT_HOST, ManagementServer.DEFAULT_PORT, BaseTemplate.UNCHANGED, null,
                TemplateFiles.DEFAULT_MAX_BYTES);
    }

    public HubConfig withApi(String host, int port) {
        return new HubConfig(dataDir, store, host, port, tunnelHost, tunnelPort, managementHost, managementPort, base, presetAdminKey, maxUploadBytes);
    }

    public HubConfig withTunnel(String host, int port) {
        return new HubConfig(dataDir, store, apiHost, apiPort, host, port, managementHost, managementPort, base, presetAdminKey, maxUploadBytes);
    }

    public HubConfig withManagement(String host, int port) {
        return new HubConfig(dataDir, store, apiHost, apiPort, tunnelHost, tunnelPort, host, port, base, presetAdminKey, maxUploadBytes);
    }

    public HubConfig withStore(StoreConfig newStore) {
        return new HubConfig(dataDir, newStore, apiHost, apiPort, tunnelHost, tunnelPort, managementHost, managementPort, base, presetAdminKey, maxUploadBytes);
    }

    /** An admin API key the operator chose ({@code e2b_} + 40 hex), stored on start if missing; null for none. */
    public HubConfig withPresetAdminKey(String key) {
        return new HubConfig(dataDir, store, apiHost, apiPort, tunnelHost, tunnelPort, managementHost, managementPort, base, key, maxUploadBytes);
    }

    public HubConfig withBase(BaseTemplate newBase) {
        return new HubConfig(dataDir, store, apiHost, apiPort, tunnelHost, tunnelPort, managementHost, managementPort, newBase, presetAdminKey, maxUploadBytes);
    }

    public HubConfig withMaxUploadBytes(long bytes) {
        return new HubConfig(dataDir, store, apiHost, apiPort, tunnelHost, tunnelPort, managementHost, managementPort, base,
                presetAdminKey, bytes);
    }
}
