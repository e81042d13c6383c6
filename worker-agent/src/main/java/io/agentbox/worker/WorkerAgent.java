package io.agentbox.worker;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.grpc.MuxAddress;
import io.agentbox.mux.grpc.MuxGrpc;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.CapacityAck;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.RegisterRequest;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.tunnel.TunnelClient;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
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
 * tunnel it dials. Per session it registers, watches templates (each snapshot resizes the pools)
 * and reports pool capacity every {@link #CAPACITY_REPORT_INTERVAL}.
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
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "worker-sync");
        t.setDaemon(true);
        return t;
    });
    private final CompletableFuture<Void> firstTemplates = new CompletableFuture<>();
    private volatile long templateVersion;

    private WorkerAgent(URI hubUri, String clusterId, String token, SandboxHost host) {
        this.clusterId = SandboxIds.requireClusterId(clusterId);
        this.host = host;
        MuxAddress serverAddress = new MuxAddress(TunnelProtocol.workerAddress(clusterId), () -> null);
        this.workerServer = MuxGrpc.serverBuilder(serverAddress).addService(host.grpcService()).build();
        MuxConfig muxConfig = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
        this.tunnel = new TunnelClient(hubUri, clusterId, token, muxConfig, MuxGrpc.serverAcceptor(serverAddress),
                this::onSession);
        this.hubChannel = MuxGrpc.channelBuilder(new MuxAddress("hub-of:" + clusterId, tunnel::current)).build();
        this.sync = SyncServiceGrpc.newStub(hubChannel);
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
        WorkerAgent agent;
        try {
            agent = new WorkerAgent(hubUri, clusterId, token, host);
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
            public void onNext(io.agentbox.protocol.v1.RegisterResponse value) {
                log.info("registered with hub as cluster {}", clusterId);
            }

            @Override
            public void onError(Throwable t) {
                log.warn("register failed: {}", t.toString());
            }

            @Override
            public void onCompleted() {
                watchTemplates(session);
                reportCapacity();
            }
        });
    }

    private void watchTemplates(MuxSession session) {
        sync.withWaitForReady().watchTemplates(WatchRequest.newBuilder().setClusterId(clusterId).setResourceVersion(templateVersion).build(),
                new StreamObserver<>() {
                    @Override
                    public void onNext(TemplateEvent event) {
                        // Every event is an authoritative snapshot (see sync.proto).
                        host.applyTemplates(event.getTemplatesList());
                        templateVersion = event.getResourceVersion();
                        log.info("applied templates at version {}: {}", templateVersion,
                                event.getTemplatesList().stream().map(t -> t.getName() + "=" + t.getPoolSize()).toList());
                        firstTemplates.complete(null);
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (session.isOpen()) {
                            log.warn("template watch failed ({}); rewatching in 1 s", t.toString());
                            timers.schedule(() -> watchTemplates(session), 1, TimeUnit.SECONDS);
                        }
                    }

                    @Override
                    public void onCompleted() {
                        onError(new IllegalStateException("hub ended the watch"));
                    }
                });
    }

    private void reportCapacity() {
        if (tunnel.current() == null) {
            return;
        }
        try {
            sync.withDeadlineAfter(5, TimeUnit.SECONDS).reportCapacity(CapacityReport.newBuilder()
                    .setClusterId(clusterId).addAllPools(host.capacity()).build(), new StreamObserver<CapacityAck>() {
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
