package io.agentbox.mux;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/** Test handler: records inbound bytes (or just hashes them), input shutdown and close. */
final class Collect extends ChannelInboundHandlerAdapter {

    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final AtomicLong count = new AtomicLong();
    final CompletableFuture<Void> inputShutdown = new CompletableFuture<>();
    final CompletableFuture<Void> inactive = new CompletableFuture<>();
    private final boolean keep;
    private final MessageDigest sha;

    Collect(boolean keep) {
        this.keep = keep;
        try {
            this.sha = MessageDigest.getInstance("SHA-256");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    synchronized String sha256() {
        try {
            return HexFormat.of().formatHex(((MessageDigest) sha.clone()).digest());
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    synchronized String text() {
        return bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        try {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            synchronized (this) {
                if (keep) {
                    bytes.writeBytes(a);
                }
                sha.update(a);
            }
            count.addAndGet(a.length);
        } finally {
            b.release();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof ChannelInputShutdownEvent) {
            inputShutdown.complete(null);
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        inactive.complete(null);
        ctx.fireChannelInactive();
    }
}
