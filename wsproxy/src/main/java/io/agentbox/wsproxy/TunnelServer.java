package io.agentbox.wsproxy;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.netty.MuxFrameHandler;
import io.agentbox.mux.netty.NettyWebSocketServer;
import io.agentbox.mux.netty.UpgradeGate;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.TunnelProtocol;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import io.netty.handler.ssl.SslContext;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WebSocket endpoint workers dial ({@link TunnelProtocol#PATH}), on Netty's WebSocket codec
 * (see {@code io.agentbox.mux.netty}: each tunnel's session runs on its socket's event loop).
 * Authenticates the upgrade, runs a yamux server session over each accepted WebSocket, and
 * registers it in the {@link TunnelRegistry}. Streams the worker opens are handed to
 * {@code acceptor} (the hub's sync gRPC server).
 *
 * <p>Refusals, all before the upgrade, with a one-line {@code text/plain} body: 400 when the
 * cluster id header is missing or malformed, 401 (with {@code WWW-Authenticate: Bearer}) when the
 * bearer token is missing or wrong, 404 on any other path.
 */
public final class TunnelServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TunnelServer.class);

    private final String host;
    private final int port;
    private final ClusterAuthenticator authenticator;
    private final TunnelRegistry registry;
    private final MuxStreamAcceptor acceptor;
    private final MuxConfig muxConfig = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
    private volatile NettyWebSocketServer server;
    private final Supplier<SslContext> tls;

    public TunnelServer(String host, int port, ClusterAuthenticator authenticator, TunnelRegistry registry,
                        MuxStreamAcceptor acceptor) {
        this(host, port, authenticator, registry, acceptor, null);
    }

    /** As above; a non-null {@code tls} serves {@code wss://} with the context it gives per new connection. */
    public TunnelServer(String host, int port, ClusterAuthenticator authenticator, TunnelRegistry registry,
                        MuxStreamAcceptor acceptor, Supplier<SslContext> tls) {
        this.tls = tls;
        this.host = host;
        this.port = port;
        this.authenticator = authenticator;
        this.registry = registry;
        this.acceptor = acceptor;
    }

    /** Binds and starts accepting tunnels. */
    public void start() throws InterruptedException {
        server = NettyWebSocketServer.builder()
                .bind(host, port)
                .tls(tls)
                .maxFramePayloadBytes(muxConfig.maxTransportMessageBytes())
                .gate(this::check)
                .route(TunnelProtocol.PATH, request -> {
                    String clusterId = request.headers().get(TunnelProtocol.CLUSTER_ID_HEADER);
                    MuxFrameHandler frames = new MuxFrameHandler(MuxRole.SERVER, muxConfig, acceptor);
                    frames.session().thenAccept(session -> registry.register(clusterId, session));
                    return frames;
                })
                .start();
    }

    private UpgradeGate.Refusal check(HttpRequest request, SocketAddress remote) {
        String clusterId = request.headers().get(TunnelProtocol.CLUSTER_ID_HEADER);
        if (!SandboxIds.isValidClusterId(clusterId)) {
            return new UpgradeGate.Refusal(HttpResponseStatus.BAD_REQUEST,
                    "missing or malformed " + TunnelProtocol.CLUSTER_ID_HEADER + " header");
        }
        String auth = request.headers().get(TunnelProtocol.AUTHORIZATION_HEADER);
        String token = auth != null && auth.startsWith(TunnelProtocol.BEARER_PREFIX)
                ? auth.substring(TunnelProtocol.BEARER_PREFIX.length()) : "";
        if (!authenticator.authenticate(clusterId, token)) {
            log.warn("refused tunnel for cluster {} from {}: bad cluster token", clusterId, remote);
            return new UpgradeGate.Refusal(HttpResponseStatus.UNAUTHORIZED, "invalid cluster token",
                    Map.of("WWW-Authenticate", "Bearer realm=\"agentbox-tunnel\""));
        }
        return null;
    }

    /** The bound address; the port is the real one when 0 was asked for. */
    public InetSocketAddress address() {
        NettyWebSocketServer s = server;
        if (s == null) {
            throw new IllegalStateException("tunnel server not started");
        }
        return s.address();
    }

    /** Stops accepting tunnels; sessions already open end when their peers or the registry close them. */
    @Override
    public void close() {
        NettyWebSocketServer s = server;
        if (s != null) {
            s.close();
        }
    }
}
