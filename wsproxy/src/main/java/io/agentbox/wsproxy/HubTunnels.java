package io.agentbox.wsproxy;

import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.mux.grpc.MuxAddress;
import io.agentbox.mux.grpc.MuxGrpc;
import io.agentbox.wsproxy.blobs.BlobStore;
import io.agentbox.wsproxy.sync.SyncServiceImpl;
import io.agentbox.wsproxy.sync.HubWatches;
import io.agentbox.wsproxy.sync.TunnelIdentity;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The hub's tunnel side in one object: the WebSocket endpoint workers dial, the registry of
 * connected clusters, the sync gRPC server workers call, and one gRPC channel per cluster for
 * calling its worker.
 *
 * <p>A cluster's channel is created once and survives reconnects: each gRPC connect opens a new
 * stream on the cluster's current session; while the cluster is offline calls fail fast with
 * UNAVAILABLE.
 */
public final class HubTunnels implements AutoCloseable {
    private final TunnelRegistry registry = new TunnelRegistry(Clock.systemUTC());
    private final MuxAddress syncAddress;
    private final SyncServiceImpl sync;
    private final Server syncServer;
    private final TunnelServer tunnelServer;
    private final ConcurrentMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    /** @param watches what the hub pushes to workers (fed by the hub store) */
    public HubTunnels(String host, int port, ClusterAuthenticator authenticator, HubWatches watches) {
        this(host, port, authenticator, watches, null);
    }

    /** As above; a non-null {@code tls} serves the tunnel endpoint as {@code wss://} (see {@link TunnelServer}). */
    public HubTunnels(String host, int port, ClusterAuthenticator authenticator, HubWatches watches,
                      Supplier<SslContext> tls) {
        this(host, port, authenticator, watches, tls, null);
    }

    /** As above; {@code blobs} are the image blobs workers read over the sync service (null: none). */
    public HubTunnels(String host, int port, ClusterAuthenticator authenticator, HubWatches watches,
                      Supplier<SslContext> tls, BlobStore blobs) {
        // One hub per JVM is the normal case; the suffix keeps tests with several hubs apart.
        this.syncAddress = new MuxAddress(TunnelProtocol.HUB_SYNC_ADDRESS + "@" + System.identityHashCode(this), () -> null);
        this.sync = new SyncServiceImpl(registry, watches, blobs);
        this.syncServer = MuxGrpc.serverBuilder(syncAddress)
                .addService(ServerInterceptors.intercept(sync, TunnelIdentity.of(registry)))
                .build();
        // gRPC may be backing off after the cluster's previous session died; connect on the new one now.
        registry.addConnectListener(id -> {
            ManagedChannel ch = channels.get(id);
            if (ch != null) {
                ch.resetConnectBackoff();
            }
        });
        this.tunnelServer = new TunnelServer(host, port, authenticator, registry, MuxGrpc.serverAcceptor(syncAddress), tls);
    }

    public HubTunnels start() throws Exception {
        syncServer.start();
        tunnelServer.start();
        return this;
    }

    public TunnelRegistry registry() {
        return registry;
    }

    public InetSocketAddress address() {
        return tunnelServer.address();
    }

    /** The gRPC channel to a cluster's worker (created on first use; valid across reconnects). */
    public ManagedChannel channel(String clusterId) {
        return channels.computeIfAbsent(clusterId, id -> MuxGrpc.channelBuilder(
                        new MuxAddress("cluster:" + id, () -> registry.session(id)))
                .maxInboundMessageSize(16 * 1024 * 1024)
                .build());
    }

    @Override
    public void close() {
        tunnelServer.close();
        channels.values().forEach(ManagedChannel::shutdownNow);
        syncServer.shutdownNow();
        sync.shutdown();
        try {
            syncServer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
