package io.agentbox.mux.netty;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxEventLoops;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.tls.ClientTls;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Dials a WebSocket ({@code ws://}, or {@code wss://} verified by the given TLS context, by default
 * {@link ClientTls#verifying ClientTls.verifying(null)}: the JDK's trust store and the host name) with Netty and
 * runs a {@link MuxSession} over it. The returned future fails with the connect error, a
 * {@link io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException} whose
 * {@code response()} holds the server's refusal (e.g. 401), or a handshake timeout.
 */
public final class NettyWebSocketClient {

    private NettyWebSocketClient() {
    }

    /**
     * Connects to {@code uri} and starts a session in {@code role}.
     *
     * @param headers extra upgrade request headers (e.g. authorization), may be {@code null}
     * @param acceptor receives streams the server opens; {@code null} refuses them
     * @param timeout for the TCP connect and, separately, for the WebSocket handshake
     */
    public static CompletableFuture<MuxSession> connect(URI uri, HttpHeaders headers, MuxRole role,
            MuxConfig config, MuxStreamAcceptor acceptor, Duration timeout) {
        return connect(uri, headers, role, config, acceptor, timeout, null);
    }

    /**
     * As above; {@code tls} is the client context for {@code wss://} (see {@link ClientTls}), null
     * for the default.
     */
    public static CompletableFuture<MuxSession> connect(URI uri, HttpHeaders headers, MuxRole role,
            MuxConfig config, MuxStreamAcceptor acceptor, Duration timeout, SslContext tls) {
        Objects.requireNonNull(config, "config");
        MuxFrameHandler frames = new MuxFrameHandler(role, config, acceptor);
        CompletableFuture<MuxSession> result = frames.session();
        Channel ch = dial(uri, headers, config.maxTransportMessageBytes(), timeout, tls, frames,
                result::completeExceptionally);
        // a caller that gives up must not leave the socket open
        result.whenComplete((s, err) -> {
            if (err != null) {
                ch.close();
            }
        });
        return result;
    }

    /**
     * Dials {@code uri} and installs {@code frames} behind Netty's WebSocket client protocol
     * handler; {@code frames} sees {@code ClientHandshakeStateEvent.HANDSHAKE_COMPLETE} and then
     * the peer's data frames (ping/pong/close are handled in front of it). A failed TCP connect is
     * reported to {@code onConnectFailure}; handshake failures reach {@code frames} as exceptions.
     *
     * @return the (not yet connected) channel
     */
    public static Channel dial(URI uri, HttpHeaders headers, long maxFramePayloadBytes, Duration timeout,
            ChannelHandler frames, Consumer<Throwable> onConnectFailure) {
        return dial(uri, headers, maxFramePayloadBytes, timeout, null, frames, onConnectFailure);
    }

    /** As above; {@code tls} is the client context for {@code wss://}, null for the default. */
    public static Channel dial(URI uri, HttpHeaders headers, long maxFramePayloadBytes, Duration timeout,
            SslContext tls, ChannelHandler frames, Consumer<Throwable> onConnectFailure) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(frames, "frames");
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("ws") && !scheme.equals("wss")) {
            throw new IllegalArgumentException("expected a ws:// or wss:// URL: " + uri);
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("URL has no host: " + uri);
        }
        boolean secure = scheme.equals("wss");
        int port = uri.getPort() != -1 ? uri.getPort() : secure ? 443 : 80;
        SslContext ssl = !secure ? null : tls != null ? tls : ClientTls.verifying(null);
        int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        WebSocketClientProtocolConfig wsConfig = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .customHeaders(headers == null ? new DefaultHttpHeaders() : headers)
                .maxFramePayloadLength((int) Math.min(Integer.MAX_VALUE, maxFramePayloadBytes))
                .handshakeTimeoutMillis(millis)
                .build();
        Bootstrap b = new Bootstrap()
                .group(MuxEventLoops.sharedSockets())
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, millis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (ssl != null) {
                            ch.pipeline().addLast("tls", ssl.newHandler(ch.alloc(), uri.getHost(), port));
                        }
                        ch.pipeline().addLast("http", new HttpClientCodec());
                        ch.pipeline().addLast("aggregator", new HttpObjectAggregator(UpgradeRouter.MAX_REQUEST_BYTES));
                        ch.pipeline().addLast("websocket", new WebSocketClientProtocolHandler(wsConfig));
                        ch.pipeline().addLast("frames", frames);
                    }
                });
        ChannelFuture connect = b.connect(uri.getHost(), port);
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                onConnectFailure.accept(f.cause());
            }
        });
        return connect.channel();
    }
}
