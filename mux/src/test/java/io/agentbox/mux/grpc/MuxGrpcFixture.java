package io.agentbox.mux.grpc;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.mux.netty.MuxFrameHandler;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.agentbox.mux.netty.NettyWebSocketServer;
import io.agentbox.mux.tools.WebSocketLibrary;
import io.netty.channel.Channel;
import java.time.Duration;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;

/**
 * A hub (yamux server, accepts the WebSocket) and a worker (yamux client, dials it) over a real
 * loopback WebSocket (Netty, the tunnel's transport, or Jetty), each with a gRPC server bound to
 * its own mux address, shared by the gRPC-over-mux tests; hooks for builder settings (flow-control
 * windows) and {@link #dropWorkerSocket()} so a test can drop the tunnel abruptly.
 */
final class MuxGrpcFixture implements AutoCloseable {

    final MuxConfig config;
    final WebSocketLibrary library;
    private final String id = UUID.randomUUID().toString();
    final MuxAddress hubServerAddr = MuxAddress.named("hub-" + id);
    final MuxAddress workerServerAddr = MuxAddress.named("worker-" + id);
    final AtomicReference<MuxSession> hubSideOfWorker = new AtomicReference<>();
    final AtomicReference<MuxSession> workerSide = new AtomicReference<>();
    /** Tears the worker's current WebSocket down without a close handshake. */
    private final AtomicReference<Runnable> dropWorker = new AtomicReference<>();
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private WebSocketClient jettyClient;
    private final URI uri;
    /** The hub's gRPC server (a test may shut it down to see streams refused). */
    final Server hubServer;

    MuxGrpcFixture(MuxConfig config, UnaryOperator<NettyServerBuilder> serverSettings,
            ServerServiceDefinition hubService, ServerServiceDefinition workerService) throws Exception {
        this(WebSocketLibrary.NETTY, config, serverSettings, hubService, workerService);
    }

    MuxGrpcFixture(WebSocketLibrary library, MuxConfig config, UnaryOperator<NettyServerBuilder> serverSettings,
            ServerServiceDefinition hubService, ServerServiceDefinition workerService) throws Exception {
        this.config = config;
        this.library = library;
        uri = library == WebSocketLibrary.NETTY ? startNettyHub() : startJettyHub();
        hubServer = serverSettings.apply(MuxGrpc.serverBuilder(hubServerAddr)).addService(hubService).build().start();
        cleanup.add(() -> hubServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        Server workerServer = serverSettings.apply(MuxGrpc.serverBuilder(workerServerAddr)).addService(workerService).build().start();
        cleanup.add(() -> workerServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        connectWorker();
    }

    private URI startNettyHub() throws Exception {
        NettyWebSocketServer server = NettyWebSocketServer.builder()
                .bind("127.0.0.1", 0)
                .maxFramePayloadBytes(config.maxTransportMessageBytes())
                .route("/mux", rq -> {
                    MuxFrameHandler h = new MuxFrameHandler(MuxRole.SERVER, config, MuxGrpc.serverAcceptor(hubServerAddr));
                    h.session().thenAccept(hubSideOfWorker::set);
                    return h;
                })
                .start();
        cleanup.add(server);
        return URI.create("ws://127.0.0.1:" + server.address().getPort() + "/mux");
    }

    private URI startJettyHub() throws Exception {
        org.eclipse.jetty.server.Server jetty = new org.eclipse.jetty.server.Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setPort(0);
        jetty.addConnector(connector);
        jetty.setHandler(WebSocketUpgradeHandler.from(jetty, container -> {
            MuxWebSockets.configure(container, config);
            container.addMapping("/mux", (rq, rs, cb) -> {
                MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.SERVER, config, MuxGrpc.serverAcceptor(hubServerAddr));
                ep.session().thenAccept(hubSideOfWorker::set);
                return ep;
            });
        }));
        jetty.start();
        cleanup.add(jetty::stop);
        jettyClient = new WebSocketClient();
        MuxWebSockets.configure(jettyClient, config);
        jettyClient.start();
        cleanup.add(jettyClient::stop);
        return URI.create("ws://127.0.0.1:" + connector.getLocalPort() + "/mux");
    }

    /** Dials a new WebSocket from the worker and waits until both ends of its mux session are open. */
    MuxSession connectWorker() throws Exception {
        MuxSession previousHubSide = hubSideOfWorker.get();
        MuxSession s;
        if (library == WebSocketLibrary.NETTY) {
            MuxFrameHandler h = new MuxFrameHandler(MuxRole.CLIENT, config, MuxGrpc.serverAcceptor(workerServerAddr));
            Channel socket = NettyWebSocketClient.dial(uri, null, config.maxTransportMessageBytes(), Duration.ofSeconds(10),
                    h, h.session()::completeExceptionally);
            s = h.session().get(10, TimeUnit.SECONDS);
            dropWorker.set(() -> socket.close());
        } else {
            CapturingEndpoint ep = new CapturingEndpoint(config, MuxGrpc.serverAcceptor(workerServerAddr));
            jettyClient.connect(ep, uri).get(10, TimeUnit.SECONDS);
            s = ep.session().get(10, TimeUnit.SECONDS);
            dropWorker.set(() -> ep.ws.disconnect());
        }
        workerSide.set(s);
        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> {
            MuxSession h = hubSideOfWorker.get();
            return h != null && h != previousHubSide && h.isOpen();
        });
        return s;
    }

    /** Closes the worker's socket at once (TCP close, no WebSocket close handshake), as on a network loss. */
    void dropWorkerSocket() {
        dropWorker.get().run();
    }

    /** A channel from the worker to the hub's gRPC server over the worker's current session. */
    ManagedChannel workerToHub(UnaryOperator<NettyChannelBuilder> settings) {
        return channel(new MuxAddress("hub", workerSide::get), settings);
    }

    /** A channel from the hub to the worker's gRPC server over the hub's current session to it. */
    ManagedChannel hubToWorker(UnaryOperator<NettyChannelBuilder> settings) {
        return channel(new MuxAddress("cluster:x", hubSideOfWorker::get), settings);
    }

    private ManagedChannel channel(MuxAddress target, UnaryOperator<NettyChannelBuilder> settings) {
        ManagedChannel ch = settings.apply(MuxGrpc.channelBuilder(target)).build();
        cleanup.add(() -> ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return ch;
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            try {
                cleanup.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Public because Jetty invokes listener methods through method handles. */
    public static final class CapturingEndpoint extends MuxWebSocketEndpoint {
        volatile Session ws;

        CapturingEndpoint(MuxConfig config, MuxStreamAcceptor acceptor) {
            super(MuxRole.CLIENT, config, acceptor);
        }

        @Override
        public void onWebSocketOpen(Session ws) {
            this.ws = ws;
            super.onWebSocketOpen(ws);
        }
    }
}
