package io.agentbox.mux.tools;

import io.agentbox.mux.MuxStreamChannel;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Echo for one mux stream: writes back what it reads, reading only while the echo can be sent
 * (so a slow reader slows its writer down), and sends FIN once the peer's FIN arrived. The stream
 * needs {@code ALLOW_HALF_CLOSURE} to see that FIN as an event. Counts echoed bytes.
 */
public final class StreamEcho extends ChannelInboundHandlerAdapter {
    private final AtomicLong bytes;

    public StreamEcho() {
        this(new AtomicLong());
    }

    public StreamEcho(AtomicLong bytes) {
        this.bytes = bytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            bytes.addAndGet(b.readableBytes());
            ctx.write(b);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        // stop reading while the echo cannot be sent, so a slow reader slows its writer down
        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof ChannelInputShutdownEvent) {
            ctx.flush();
            ((MuxStreamChannel) ctx.channel()).shutdownOutput();
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
