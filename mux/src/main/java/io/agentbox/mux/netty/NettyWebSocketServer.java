package io.agentbox.mux.netty;

import io.agentbox.mux.MuxEventLoops;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Netty WebSocket server with a fixed set of paths, each served by its own frame handler (for
 * the mux: a new {@link MuxFrameHandler} per connection). Requests are checked before the upgrade
 * (see {@link UpgradeRouter}): an unknown path answers 404, a request that is not a WebSocket
 * upgrade 400, a refusal of the {@link UpgradeGate} its status, all with a one-line text body. A
 * connection must complete its upgrade request within {@link Builder#upgradeTimeout} (10 s by
 * default); connections beyond {@link Builder#maxConnections(int)} are closed at once. With
 * {@link Builder#tls} it serves {@code wss://}: every new connection starts a TLS handshake with the
 * context the supplier gives at that moment (so a reloaded certificate applies to new connections).
 */
public final class NettyWebSocketServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NettyWebSocketServer.class);

    private final Channel server;
    private final ChannelGroup connections;

    private NettyWebSocketServer(Channel server, ChannelGroup connections) {
        this.server = server;
        this.connections = connections;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    /** Stops accepting and closes every connection it accepted (their sessions end); idempotent. */
    @Override
    public void close() {
        server.close().syncUninterruptibly();
        connections.close().awaitUninterruptibly();
    }

    /** Settings of a {@link NettyWebSocketServer}; {@link #start()} binds. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private long maxFramePayloadBytes = 16L * 1024 * 1024;
        private int maxConnections = 4096;
        private long upgradeTimeoutMillis = 10_000;
        private UpgradeGate gate = UpgradeGate.ACCEPT_ALL;
        private EventLoopGroup group;
        private Supplier<SslContext> tls;
        private final Map<String, Function<FullHttpRequest, ChannelHandler>> routes = new LinkedHashMap<>();

        private Builder() {
        }

        /** Interface and port to bind; port 0 picks a free one. Default 127.0.0.1:0. */
        public Builder bind(String host, int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535: " + port);
            }
            this.host = Objects.requireNonNull(host, "host");
            this.port = port;
            return this;
        }

        /** Largest WebSocket frame payload accepted; a larger one closes the connection with 1009. Default 16 MiB. */
        public Builder maxFramePayloadBytes(long bytes) {
            if (bytes < 1024 || bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("maxFramePayloadBytes must be 1 KiB..2 GiB: " + bytes);
            }
            this.maxFramePayloadBytes = bytes;
            return this;
        }

        /**
         * Serves WebSocket upgrades at {@code path} (exact match, query ignored); {@code handler}
         * builds the handler that receives the connection's frames, from the upgrade request.
         */
        public Builder route(String path, Function<FullHttpRequest, ChannelHandler> handler) {
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("path must start with '/': " + path);
            }
            routes.put(path, Objects.requireNonNull(handler, "handler"));
            return this;
        }

        /** Open connections at most (upgraded or not); more are closed at once. Default 4096. */
        public Builder maxConnections(int connections) {
            if (connections < 1) {
                throw new IllegalArgumentException("maxConnections must be positive: " + connections);
            }
            this.maxConnections = connections;
            return this;
        }

        /** How long a new connection may take to send its upgrade request before it is closed. Default 10 s. */
        public Builder upgradeTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("upgradeTimeout must be positive: " + timeout);
            }
            this.upgradeTimeoutMillis = timeout.toMillis();
            return this;
        }

        /** Checks every upgrade request before the handshake; default accepts all. */
        public Builder gate(UpgradeGate gate) {
            this.gate = Objects.requireNonNull(gate, "gate");
            return this;
        }

        /** Event loops for accepted connections; default {@link MuxEventLoops#sharedSockets()}. */
        public Builder group(EventLoopGroup group) {
            this.group = group;
            return this;
        }

        /**
         * Serves TLS ({@code wss://}) with the server context {@code context} returns, asked once per
         * new connection; null (the default) serves plain {@code ws://}.
         */
        public Builder tls(Supplier<SslContext> context) {
            this.tls = context;
            return this;
        }

        /** Binds and starts serving. */
        public NettyWebSocketServer start() throws InterruptedException {
            if (routes.isEmpty()) {
                throw new IllegalStateException("no routes");
            }
            EventLoopGroup g = group != null ? group : MuxEventLoops.sharedSockets();
            Map<String, Function<FullHttpRequest, ChannelHandler>> table = Map.copyOf(routes);
            UpgradeGate upgradeGate = gate;
            int maxPayload = (int) maxFramePayloadBytes;
            ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
            int connectionCap = maxConnections;
            long upgradeMillis = upgradeTimeoutMillis;
            Supplier<SslContext> serverTls = tls;
            ServerBootstrap b = new ServerBootstrap()
                    .group(g)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            if (connections.size() >= connectionCap) {
                                log.warn("refusing connection from {}: {} connections open", ch.remoteAddress(), connectionCap);
                                ch.close();
                                return;
                            }
                            connections.add(ch);
                            if (serverTls != null) {
                                // SslHandler ends a handshake that takes longer than 10 s
                                ch.pipeline().addLast("tls", serverTls.get().newHandler(ch.alloc()));
                            }
                            ch.pipeline().addLast("upgrade-timeout", new ReadTimeoutHandler(
                                    upgradeMillis, TimeUnit.MILLISECONDS));
                            ch.pipeline().addLast("http", new HttpServerCodec());
                            ch.pipeline().addLast("aggregator", new HttpObjectAggregator(UpgradeRouter.MAX_REQUEST_BYTES));
                            ch.pipeline().addLast("router", new UpgradeRouter(table, upgradeGate, maxPayload));
                        }
                    });
            Channel server = b.bind(host, port).sync().channel();
            return new NettyWebSocketServer(server, connections);
        }
    }
}
