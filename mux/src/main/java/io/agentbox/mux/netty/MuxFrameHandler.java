package io.agentbox.mux.netty;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of a WebSocket pipeline: starts a {@link MuxSession} when the handshake
 * completes and feeds it the payload of every binary (and continuation) frame as a byte stream
 * (yamux frames may span WebSocket frames, a WebSocket frame may hold many yamux frames). On the
 * server end it then puts a {@link StreamingFrameDecoder} in place of Netty's frame decoder, which
 * passes binary payload on as plain {@link ByteBuf} pieces, unmasked. Text frames are dropped;
 * ping/pong and close frames are handled by Netty's protocol handler in front.
 *
 * <p>Unless the config names an event loop group, the session's stream channels are registered on
 * this connection's event loop, so a frame travels from the socket to the stream's handlers and
 * back without a thread hand-off (the model of Netty's HTTP/2 child channels). The session reader
 * never blocks and bounds memory by the windows it granted, so the socket is read with auto-read.
 */
public final class MuxFrameHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(MuxFrameHandler.class);

    private final MuxRole role;
    private final MuxConfig config;
    private final MuxStreamAcceptor acceptor;
    private final CompletableFuture<MuxSession> session = new CompletableFuture<>();
    private MuxSession mux;

    public MuxFrameHandler(MuxRole role, MuxConfig config, MuxStreamAcceptor acceptor) {
        this.role = Objects.requireNonNull(role, "role");
        this.config = Objects.requireNonNull(config, "config");
        this.acceptor = acceptor;
    }

    /** Completes with the session once the WebSocket handshake is done; exceptionally if the connection fails first. */
    public CompletableFuture<MuxSession> session() {
        return session;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            start(ctx, false);
        } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            start(ctx, true);
        } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
            session.completeExceptionally(new WebSocketHandshakeException("websocket handshake timed out"));
        }
        super.userEventTriggered(ctx, evt);
    }

    private void start(ChannelHandlerContext ctx, boolean websocketClient) {
        if (mux != null) {
            return;
        }
        if (!websocketClient) {
            Integer limit = ctx.channel().attr(UpgradeRouter.MAX_FRAME_PAYLOAD).get();
            StreamingFrameDecoder.install(ctx.pipeline(), true, limit != null ? limit : config.maxTransportMessageBytes());
        }
        MuxConfig cfg = config.eventLoopGroup() != null ? config
                : config.toBuilder().eventLoopGroup(ctx.channel().eventLoop()).build();
        MuxSession started = MuxSession.start(role, cfg, new NettyWebSocketTransport(ctx.channel(), websocketClient), acceptor);
        mux = started;
        // any bytes from the socket (WebSocket pings and pongs included) count as the peer's liveness
        ctx.pipeline().addFirst("mux-liveness", new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext c, Object msg) {
                started.markInbound();
                c.fireChannelRead(msg);
            }
        });
        session.complete(started);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            ByteBuf content = msg instanceof ByteBuf b ? b
                    : msg instanceof BinaryWebSocketFrame || msg instanceof ContinuationWebSocketFrame ? ((WebSocketFrame) msg).content()
                    : null;
            if (mux != null && content != null) {
                if (content.nioBufferCount() == 1) {
                    mux.receive(content.nioBuffer());
                } else {
                    for (ByteBuffer b : content.nioBuffers()) {
                        mux.receive(b);
                    }
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        EOFException closed = new EOFException("websocket closed");
        session.completeExceptionally(closed);
        if (mux != null) {
            mux.transportClosed(closed);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("mux {} websocket failed: {}", role, cause.toString());
        session.completeExceptionally(cause);
        ctx.close();
    }
}
