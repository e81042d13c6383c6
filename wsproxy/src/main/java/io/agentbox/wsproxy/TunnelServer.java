package io.agentbox.wsproxy;

import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.protocol.SandboxIds;
import java.net.InetSocketAddress;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.server.ServerUpgradeResponse;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WebSocket endpoint workers dial ({@link TunnelProtocol#PATH}). Authenticates the upgrade,
 * runs a yamux server session over each accepted WebSocket, and registers it in the
 * {@link TunnelRegistry}. Streams the worker opens are handed to {@code acceptor} (the hub's sync
 * gRPC server).
 *
 * <p>Refusals, all before the upgrade: 400 when the cluster id header is missing or malformed,
 * 401 when the bearer token is missing or wrong.
 */
public final class TunnelServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TunnelServer.class);

    private final Server server;
    private final ServerConnector connector;

    public TunnelServer(String host, int port, ClusterAuthenticator authenticator, TunnelRegistry registry,
                        MuxStreamAcceptor acceptor) {
        this.server = new Server();
        this.connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        MuxConfig muxConfig = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
        server.setHandler(WebSocketUpgradeHandler.from(server, container -> {
            MuxWebSockets.configure(container, muxConfig);
            container.addMapping(TunnelProtocol.PATH, (req, resp, callback) ->
                    upgrade(req, resp, callback, muxConfig, authenticator, registry, acceptor));
        }));
    }

    private static Object upgrade(ServerUpgradeRequest req, ServerUpgradeResponse resp,
                                  org.eclipse.jetty.util.Callback callback, MuxConfig muxConfig,
                                  ClusterAuthenticator authenticator,
                                  TunnelRegistry registry, MuxStreamAcceptor acceptor) {
        String clusterId = req.getHeaders().get(TunnelProtocol.CLUSTER_ID_HEADER);
        if (!SandboxIds.isValidClusterId(clusterId)) {
            Response.writeError(req, resp, callback, 400,
                    "missing or malformed " + TunnelProtocol.CLUSTER_ID_HEADER + " header");
            return null;
        }
        String auth = req.getHeaders().get(TunnelProtocol.AUTHORIZATION_HEADER);
        String token = auth != null && auth.startsWith(TunnelProtocol.BEARER_PREFIX)
                ? auth.substring(TunnelProtocol.BEARER_PREFIX.length()) : "";
        if (!authenticator.authenticate(clusterId, token)) {
            log.warn("refused tunnel for cluster {} from {}: bad cluster token", clusterId,
                    org.eclipse.jetty.server.Request.getRemoteAddr(req));
            resp.getHeaders().put("WWW-Authenticate", "Bearer realm=\"agentbox-tunnel\"");
            Response.writeError(req, resp, callback, 401, "invalid cluster token");
            return null;
        }
        MuxWebSocketEndpoint endpoint = new MuxWebSocketEndpoint(MuxRole.SERVER, muxConfig, acceptor);
        endpoint.session().thenAccept(session -> registry.register(clusterId, session));
        return endpoint;
    }

    public void start() throws Exception {
        server.start();
    }

    /** The bound address; the port is the real one when 0 was asked for. */
    public InetSocketAddress address() {
        return new InetSocketAddress(connector.getHost() == null ? "0.0.0.0" : connector.getHost(), connector.getLocalPort());
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            log.warn("tunnel server stop failed", e);
        }
    }
}
