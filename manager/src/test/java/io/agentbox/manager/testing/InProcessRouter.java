package io.agentbox.manager.testing;

import io.agentbox.manager.routing.ClusterRouter;
import io.grpc.BindableService;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A {@link ClusterRouter} whose clusters are in-process gRPC servers (one per cluster). */
public final class InProcessRouter implements ClusterRouter, AutoCloseable {
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Map<String, Server> servers = new ConcurrentHashMap<>();

    /** Serves {@code service} as cluster {@code clusterId}. */
    public InProcessRouter add(String clusterId, BindableService service) throws IOException {
        return add(clusterId, List.of(service));
    }

    /** Serves {@code services} (a worker's: {@code WorkerUnderTest.services()}) as cluster {@code clusterId}. */
    public InProcessRouter add(String clusterId, List<? extends BindableService> services) throws IOException {
        String name = "agentbox-test-" + clusterId + "-" + System.nanoTime();
        InProcessServerBuilder server = InProcessServerBuilder.forName(name).directExecutor();
        services.forEach(server::addService);
        servers.put(clusterId, server.build().start());
        channels.put(clusterId, InProcessChannelBuilder.forName(name).build());
        return this;
    }

    private final java.util.Set<String> silent = ConcurrentHashMap.newKeySet();

    /**
     * Adds cluster {@code clusterId} whose worker is silent: its tunnel still looks connected, calls
     * to it never answer, and nothing has been heard from it for a day.
     */
    public InProcessRouter addSilent(String clusterId) throws IOException {
        silent.add(clusterId);
        return add(clusterId, new io.agentbox.protocol.v1.SandboxServiceGrpc.SandboxServiceImplBase() {
            @Override
            public void createSandbox(io.agentbox.protocol.v1.CreateSandboxRequest request,
                                      io.grpc.stub.StreamObserver<io.agentbox.protocol.v1.SandboxInfo> response) {
                // never answers, like a frozen worker
            }
        });
    }

    @Override
    public java.time.Duration probeSilence(String clusterId) {
        return silent.contains(clusterId) ? java.time.Duration.ofDays(1) : java.time.Duration.ZERO;
    }

    @Override
    public String pickCluster(String template, java.util.Set<String> excluded) {
        return channels.keySet().stream().filter(c -> !excluded.contains(c)).sorted().findFirst().orElse(null);
    }

    /** Simulates a worker going away. */
    public void disconnect(String clusterId) {
        ManagedChannel c = channels.remove(clusterId);
        if (c != null) {
            c.shutdownNow();
        }
        silent.remove(clusterId);
        Server s = servers.remove(clusterId);
        if (s != null) {
            s.shutdownNow();
        }
    }

    @Override
    public Channel channel(String clusterId) {
        return channels.get(clusterId);
    }

    @Override
    public String pickCluster(String template) {
        return channels.keySet().stream().sorted().findFirst().orElse(null);
    }

    @Override
    public void close() {
        channels.keySet().forEach(this::disconnect);
    }
}
