package io.agentbox.worker;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.grpc.MuxAddress;
import io.agentbox.mux.grpc.MuxGrpc;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.CapacityAck;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.ConfigEvent;
import io.agentbox.protocol.v1.RegisterRequest;
import io.agentbox.protocol.v1.RegisterResponse;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.worker.image.pull.HubImageSource;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.sync.HubWatch;
import io.agentbox.worker.sync.WatchReplica;
import io.agentbox.worker.tunnel.TunnelClient;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker: sandboxes ({@link SandboxHost}), the worker gRPC service it serves to the hub, and the
 * tunnel it dials. Per session it registers, watches templates (every change resizes the pools),
 * API key hashes and its cluster config, each resuming from the version it applied before, and
 * reports pool capacity and those versions every {@link #CAPACITY_REPORT_INTERVAL}.
 */
public final class WorkerAgent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerAgent.class);
    public static final Duration CAPACITY_REPORT_INTERVAL = Duration.ofSeconds(2);
    private static final String VERSION = "0.1.0";

    private final String clusterId;
    private final SandboxHost host;
    private final Server workerServer;
    private final TunnelClient tunnel;
    private final ManagedChannel hubChannel;
    private final SyncServiceGrpc.SyncServiceStub sync;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("worker-sync"));
    private final CompletableFuture<Void> firstTemplates = new CompletableFuture<>();
    private final WatchReplica<Template> templates = new WatchReplica<>("templates", Template::getName);
    private final WatchReplica<ApiKey> apiKeys = new WatchReplica<>("api-keys", ApiKey::getKeyHash);
    private final WatchReplica<ConfigEntry> config = new WatchReplica<>("config", ConfigEntry::getKey);
    private final List<HubWatch<?, ?>> watches;

    private WorkerAgent(URI hubUri, String clusterId, String token, SandboxHost host, SslContext hubTls) {
        this.clusterId = SandboxIds.requireClusterId(clusterId);
        this.host = host;
        MuxAddress serverAddress = new MuxAddress(TunnelProtocol.workerAddress(clusterId), () -> null);
        NettyServerBuilder server = MuxGrpc.serverBuilder(serverAddress);
        host.grpcServices().forEach(server::addService);
        this.workerServer = server.build();
        MuxConfig muxConfig = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
        this.tunnel = new TunnelClient(hubUri, clusterId, token, muxConfig, MuxGrpc.serverAcceptor(serverAddress),
                this::onSession, hubTls);
        this.hubChannel = MuxGrpc.channelBuilder(new MuxAddress("hub-of:" + clusterId, tunnel::current)).build();
        this.sync = SyncServiceGrpc.newStub(hubChannel);
        // built templates' images come from the hub's blobs over this tunnel (docs/template-builds.md)
        host.builtImagesFrom(HubImageSource.over(hubChannel));
        SyncServiceGrpc.SyncServiceStub ready = sync.withWaitForReady();
        this.watches = List.of(
                new HubWatch<TemplateEvent, Template>(clusterId, templates, ready::watchTemplates, TemplateEvent::getType,
                        TemplateEvent::getResourceVersion, TemplateEvent::getTemplatesList, timers),
                new HubWatch<ApiKeyEvent, ApiKey>(clusterId, apiKeys, ready::watchApiKeys, ApiKeyEvent::getType,
                        ApiKeyEvent::getResourceVersion, ApiKeyEvent::getKeysList, timers),
                new HubWatch<ConfigEvent, ConfigEntry>(clusterId, config, ready::watchConfig, ConfigEvent::getType,
                        ConfigEvent::getResourceVersion, ConfigEvent::getEntriesList, timers));
        config.addListener(host.registryCredentials()::apply);
        templates.addListener(all -> {
            host.applyTemplates(all);
            log.info("applied templates at version {}: {}", templates.version(),
                    all.stream().map(t -> t.getName() + "=" + t.getPoolSize()).toList());
            firstTemplates.complete(null);
            // the hub learns of new pools at once (a template build is ready once its pool reports ready)
            timers.execute(this::reportCapacity);
        });
    }

    /**
     * Starts the sandbox host, the worker gRPC server and the tunnel dialer; returns at once (the
     * tunnel connects in the background, see {@link #firstTemplates()}).
     *
     * @param hubUri the hub's tunnel endpoint, e.g. {@code ws://127.0.0.1:9003/v1/tunnel}
     */
    public static WorkerAgent start(URI hubUri, String clusterId, String token, Path dataDir) throws Exception {
        return start(hubUri, clusterId, token, dataDir, List.of());
    }

    /** As above; {@code hiddenFromSandboxes} are host directories sandboxes must not see (see SandboxHost). */
    public static WorkerAgent start(URI hubUri, String clusterId, String token, Path dataDir,
                                    List<Path> hiddenFromSandboxes) throws Exception {
        SandboxIds.requireClusterId(clusterId);
        return start(hubUri, clusterId, token,
                SandboxHost.start(clusterId, dataDir, SandboxPools.DEFAULT_MAX_SANDBOXES, hiddenFromSandboxes));
    }

    /**
     * As above over a host built by the caller (for example one running the {@code kubernetes}
     * runtime, see {@link SandboxHost#withRuntimes}); the agent owns and closes it.
     */
    public static WorkerAgent start(URI hubUri, String clusterId, String token, SandboxHost host) throws Exception {
        return start(hubUri, clusterId, token, host, null);
    }

    /**
     * As above; {@code hubTls} verifies the hub of a {@code wss://} URI (see
     * {@code io.agentbox.mux.tls.ClientTls}), null for the JVM's trust store.
     */
    public static WorkerAgent start(URI hubUri, String clusterId, String token, SandboxHost host, SslContext hubTls)
            throws Exception {
        WorkerAgent agent;
        try {
            agent = new WorkerAgent(hubUri, clusterId, token, host, hubTls);
        } catch (RuntimeException e) {
            host.close();
            throw e;
        }
        agent.workerServer.start();
        agent.tunnel.start();
        agent.timers.scheduleWithFixedDelay(agent::reportCapacity, CAPACITY_REPORT_INTERVAL.toMillis(),
                CAPACITY_REPORT_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        return agent;
    }

    public String clusterId() {
        return clusterId;
    }

    public SandboxHost host() {
        return host;
    }

    /** Completes when the first template snapshot from the hub has been applied to the pools. */
    public CompletableFuture<Void> firstTemplates() {
        return firstTemplates;
    }

    private void onSession(MuxSession session) {
        // gRPC may be backing off after the previous session died; connect on the new one now.
        hubChannel.resetConnectBackoff();
        sync.withWaitForReady().withDeadlineAfter(10, TimeUnit.SECONDS).register(RegisterRequest.newBuilder().setClusterId(clusterId)
                .setVersion(VERSION).addAllRuntimes(host.runtimeNames()).build(), new StreamObserver<>() {
            @Override
            public void onNext(RegisterResponse value) {
                log.info("registered with hub as cluster {}", clusterId);
            }

            @Override
            public void onError(Throwable t) {
                log.warn("register failed: {}", t.toString());
            }

            @Override
            public void onCompleted() {
                watches.forEach(w -> w.start(session));
                reportCapacity();
            }
        });
    }

    /** The templates the hub pushed for this cluster. */
    public WatchReplica<Template> templates() {
        return templates;
    }

    /** The API key hashes the hub pushed (for serving the public API inside the cluster). */
    public WatchReplica<ApiKey> apiKeys() {
        return apiKeys;
    }

    /** This cluster's config entries as pushed by the hub. */
    public WatchReplica<ConfigEntry> config() {
        return config;
    }

    private void reportCapacity() {
        if (tunnel.current() == null) {
            return;
        }
        try {
            sync.withDeadlineAfter(5, TimeUnit.SECONDS).reportCapacity(CapacityReport.newBuilder()
                    .setClusterId(clusterId).addAllPools(host.capacity()).setSandboxes(host.liveSandboxes())
                    .putAppliedVersions(templates.name(), templates.version())
                    .putAppliedVersions(apiKeys.name(), apiKeys.version())
                    .putAppliedVersions(config.name(), config.version())
                    .build(), new StreamObserver<CapacityAck>() {
                        @Override
                        public void onNext(CapacityAck value) {}

                        @Override
                        public void onError(Throwable t) {
                            log.debug("capacity report failed: {}", t.toString());
                        }

                        @Override
                        public void onCompleted() {}
                    });
        } catch (RuntimeException e) {
            log.debug("capacity report failed", e);
        }
    }

    /** Stops dialing, kills every sandbox and removes its files. */
    @Override
    public void close() {
        timers.shutdownNow();
        tunnel.close();
        hubChannel.shutdownNow();
        workerServer.shutdownNow();
        host.close();
    }
}
