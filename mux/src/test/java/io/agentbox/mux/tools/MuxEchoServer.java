package io.agentbox.mux.tools;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.mux.netty.MuxFrameHandler;
import io.agentbox.mux.netty.NettyWebSocketServer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;

/**
 * Diagnostic echo peer for the mux tunnel (the "iperf server"). A WebSocket server (Netty by
 * default, or Jetty; see {@link WebSocketLibrary}) that accepts WebSocket connections at {@value #MUX_PATH} and runs a yamux SERVER session on each; every
 * stream the client opens is echoed byte for byte, and the echo's FIN follows the client's FIN
 * (so a client that half-closes gets all its bytes back, then EOF). Any standard yamux client
 * speaking yamux over WebSocket binary messages (e.g. hashicorp/yamux over a gorilla connection)
 * can use it.
 *
 * <p>For comparison without the mux it also echoes every binary message on a plain WebSocket at
 * {@value #RAW_PATH} (see {@link RawWebSocketBench}).
 */
public final class MuxEchoServer implements AutoCloseable {

    /** WebSocket path of the yamux echo service. */
    public static final String MUX_PATH = "/mux";
    /** WebSocket path of the plain (mux-less) message echo. */
    public static final String RAW_PATH = "/echo";

    private final WebSocketLibrary library;
    private final String host;
    private final AtomicLong sessions = new AtomicLong();
    private final AtomicLong streams = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private Server jetty;
    private ServerConnector connector;
    private NettyWebSocketServer netty;

    private MuxEchoServer(String host, WebSocketLibrary library) {
        this.host = host;
        this.library = library;
    }

    private void startJetty(int port, MuxConfig config) throws Exception {
        jetty = new Server();
        connector = new ServerConnector(jetty);
        connector.setHost(host);
        connector.setPort(port);
        jetty.addConnector(connector);
        MuxStreamAcceptor acceptor = this::accept;
        jetty.setHandler(WebSocketUpgradeHandler.from(jetty, container -> {
            MuxWebSockets.configure(container, config);
            container.addMapping(MUX_PATH, (rq, rs, cb) -> {
                sessions.incrementAndGet();
                return new MuxWebSocketEndpoint(MuxRole.SERVER, config, acceptor);
            });
            container.addMapping(RAW_PATH, (rq, rs, cb) -> new RawEcho());
        }));
        jetty.start();
    }

    private void startNetty(int port, MuxConfig config) throws InterruptedException {
        MuxStreamAcceptor acceptor = this::accept;
        netty = NettyWebSocketServer.builder()
                .bind(host, port)
                .maxFramePayloadBytes(config.maxTransportMessageBytes())
                .route(MUX_PATH, rq -> {
                    sessions.incrementAndGet();
                    return new MuxFrameHandler(MuxRole.SERVER, config, acceptor);
                })
                .route(RAW_PATH, rq -> new RawEchoHandler())
                .start();
    }

    /** As {@link #start(String, int, MuxConfig, WebSocketLibrary)} on Netty. */
    public static MuxEchoServer start(String host, int port, MuxConfig config) throws Exception {
        return start(host, port, config, WebSocketLibrary.NETTY);
    }

    /**
     * Starts listening on {@code host:port} ({@code port} 0 picks a free port).
     *
     * @param host interface to bind, e.g. {@code 127.0.0.1} or {@code 0.0.0.0}
     * @param config mux settings of every server session (window, keepalive, ...)
     * @param library the WebSocket server implementation
     */
    public static MuxEchoServer start(String host, int port, MuxConfig config, WebSocketLibrary library) throws Exception {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(library, "library");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535: " + port);
        }
        MuxEchoServer s = new MuxEchoServer(host, library);
        try {
            if (library == WebSocketLibrary.NETTY) {
                s.startNetty(port, config);
            } else {
                s.startJetty(port, config);
            }
        } catch (Exception e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** The WebSocket implementation serving the endpoints. */
    public WebSocketLibrary library() {
        return library;
    }

    /** The bound port. */
    public int port() {
        return netty != null ? netty.address().getPort() : connector.getLocalPort();
    }

    /** {@code ws://host:port/mux}; a wildcard bind address is shown as 127.0.0.1. */
    public URI uri() {
        return uri(MUX_PATH);
    }

    /** {@code ws://host:port/echo}, the plain WebSocket echo. */
    public URI rawUri() {
        return uri(RAW_PATH);
    }

    private URI uri(String path) {
        String h = host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host;
        if (h.contains(":") && !h.startsWith("[")) {
            h = "[" + h + "]";
        }
        return URI.create("ws://" + h + ":" + port() + path);
    }

    /** WebSocket connections upgraded at {@value #MUX_PATH} so far. */
    public long sessionsAccepted() {
        return sessions.get();
    }

    /** Streams accepted so far. */
    public long streamsAccepted() {
        return streams.get();
    }

    /** Payload bytes echoed so far (sum over all streams). */
    public long bytesEchoed() {
        return bytes.get();
    }

    /** The listening address, for log lines. */
    public InetSocketAddress address() {
        return new InetSocketAddress(host, port());
    }

    @Override
    public void close() throws Exception {
        if (netty != null) {
            netty.close();
        }
        if (jetty != null) {
            jetty.stop();
        }
    }

    private void accept(MuxSession session, Channel stream) {
        streams.incrementAndGet();
        // keep writing after the client's FIN: the echo of its last bytes may still be queued
        stream.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        stream.pipeline().addLast(new StreamEcho(bytes));
    }


    /** Plain WebSocket echo: each binary message is sent back, the next read once it is sent. Public only for Jetty. */
    public static final class RawEcho implements Session.Listener.AutoDemanding {
        private volatile Session session;

        @Override
        public void onWebSocketOpen(Session s) {
            this.session = s;
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            // the payload stays valid until callback completes, i.e. until the echo is written
            session.sendBinary(payload, callback);
        }
    }

    /**
     * Standalone entry point: {@code MuxEchoServer [--host H] [--port P] [--window BYTES] [--library netty|jetty]}; prints
     * {@code listening ws://...} and serves until killed. The operator CLI is {@code agentbox mux echo-server}.
     */
    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        int port = 0;
        MuxConfig.Builder cfg = MuxConfig.builder();
        WebSocketLibrary library = WebSocketLibrary.NETTY;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--host" -> host = args[++i];
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--window" -> cfg.initialStreamWindow(Integer.parseInt(args[++i]));
                case "--library" -> library = WebSocketLibrary.parse(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        MuxEchoServer server = start(host, port, cfg.build(), library);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception ignored) {
                // exiting anyway
            }
        }, "mux-echo-shutdown"));
        System.out.println("listening " + server.uri());
        System.out.flush();
        Thread.currentThread().join();
    }
}
