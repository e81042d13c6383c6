package io.agentbox.manager.cli;

import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.wsproxy.ClusterAuthenticator;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "hub", mixinStandardHelpOptions = true,
        description = "The hub: public API and the tunnel endpoint that worker clusters dial.")
final class HubCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "0.0.0.0", description = "Address of the public API (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "Port of the public API (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--tunnel-host", defaultValue = "0.0.0.0", description = "Address of the tunnel endpoint (default: ${DEFAULT-VALUE}).")
    String tunnelHost;

    @Option(names = "--tunnel-port", defaultValue = "" + TunnelProtocol.DEFAULT_PORT, description = "Port of the tunnel endpoint (default: ${DEFAULT-VALUE}).")
    int tunnelPort;

    @Option(names = "--cluster-token-file",
            description = "File holding a token any worker may present (at least 16 characters); "
                    + "without it only clusters registered through the management API can connect.")
    Path tokenFile;

    @Mixin
    BaseTemplateOptions base;

    @Mixin
    TlsOptions tls;

    @Mixin
    StoreOptions store;

    @Mixin
    ManagementOptions management;

    @Mixin
    TeamLimitOptions teamLimits;

    @Option(names = "--max-upload-mb", defaultValue = "1024",
            description = "Largest COPY archive a Template.build may upload, in MiB (default: ${DEFAULT-VALUE}).")
    long maxUploadMb;

    @Option(names = "--data-dir", description = "Where the embedded store, admin key and manager token live (default: $AGENTBOX_DATA_DIR or ~/.agentbox).")
    Path dataDir;

    @Option(names = "--admin-key-file", description = "File holding an admin API key to use (e2b_ and 40 hex "
            + "characters, e.g. from a Kubernetes Secret); stored on start if missing. Without it the first start "
            + "creates a random one.")
    Path adminKeyFile;

    @Override
    public Integer call() throws Exception {
        teamLimits.check(this);
        ClusterAuthenticator shared = tokenFile == null ? null
                : new SharedTokenAuthenticator(Files.readString(tokenFile, StandardCharsets.UTF_8).trim());
        Path dir = dataDir != null ? dataDir : DataDirs.defaultDataDir();
        HubConfig config = HubConfig.defaults(dir).withStore(store.toStoreConfig(dir)).withApi(host, port)
                .withTunnel(tunnelHost, tunnelPort).withManagement(management.host, management.port)
                .withBase(base.toBaseTemplate()).withMaxUploadBytes(maxUploadMb << 20)
                .withPresetAdminKey(adminKeyFile == null ? null : Files.readString(adminKeyFile, StandardCharsets.UTF_8).trim());
        ServerTls serverTls = tls.start(this);
        Hub hub = Hub.start(config, shared, serverTls);
        teamLimits.applyTo(hub.store());
        hub.newAdminKey().ifPresent(k -> System.out.println("agentbox: admin key (shown once; also in "
                + dir.resolve("admin-key").toAbsolutePath() + "): " + k));
        SecretLines.printManagerToken(hub, dir);
        System.out.println("agentbox: hub serving the API on port " + hub.apiPort() + ", tunnels on port " + hub.tunnelPort()
                + (serverTls == null ? "" : " (TLS: https and wss, certificate " + serverTls.keyPair().describe() + ")"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            hub.close();
            stopped.countDown();
        }, "agentbox-shutdown"));
        stopped.await();
        return 0;
    }
}
