package io.agentbox.mux.netty;

import io.agentbox.mux.MuxTransport;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * {@link MuxTransport} over a Netty channel whose pipeline speaks WebSocket: every write is one
 * binary frame. On the client end frames must be masked; those are written by {@link MaskedFrames}.
 */
final class NettyWebSocketTransport implements MuxTransport {

    /** How long a peer may take to answer our close frame before the socket is closed anyway. */
    private static final long CLOSE_GRACE_MILLIS = 2000;

    private final Channel channel;
    private final boolean masking;

    /** @param masking true on the client end of the WebSocket (RFC 6455 §5.3) */
    NettyWebSocketTransport(Channel channel, boolean masking) {
        this.channel = channel;
        this.masking = masking;
    }

    @Override
    public void write(ByteBuf bytes, WriteCallback done) {
        if (!masking) {
            channel.writeAndFlush(new BinaryWebSocketFrame(bytes))
                    .addListener(f -> done.completed(f.isSuccess() ? null : f.cause()));
            return;
        }
        int key = MaskedFrames.newMaskKey();
        MaskedFrames.mask(bytes, key);
        ByteBuf header = MaskedFrames.header(channel.alloc(), bytes.readableBytes(), key);
        if (channel.eventLoop().inEventLoop()) {
            writeFrame(header, bytes, done);
            return;
        }
        // Header and payload are two writes. From another thread (a stream channel on another
        // loop, as gRPC's are, or a caller's ping or open) each would become its own task on the
        // socket's loop, and a frame written there in between (the pong Netty sends for every
        // ping) would split them: the peer would read the pong as payload. One task keeps them
        // adjacent.
        try {
            channel.eventLoop().execute(() -> writeFrame(header, bytes, done));
        } catch (RejectedExecutionException e) {
            header.release();
            bytes.release();
            done.completed(e);
        }
    }

    private void writeFrame(ByteBuf header, ByteBuf payload, WriteCallback done) {
        channel.write(header, channel.voidPromise());
        channel.writeAndFlush(payload).addListener(f -> done.completed(f.isSuccess() ? null : f.cause()));
    }

    @Override
    public void close() {
        if (!channel.isActive()) {
            channel.close();
            return;
        }
        channel.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.NORMAL_CLOSURE, "mux closed"))
                .addListener(ChannelFutureListener.CLOSE);
        // a peer that never answers must not keep the socket open
        channel.eventLoop().schedule(() -> {
            channel.close();
        }, CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    }
}
