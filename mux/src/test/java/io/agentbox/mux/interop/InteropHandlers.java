package io.agentbox.mux.interop;

import io.agentbox.mux.MuxStreamChannel;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/** Netty handlers the interop tests put on mux stream channels. */
final class InteropHandlers {

    private InteropHandlers() {
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** Hashes (and optionally keeps) inbound bytes; records the peer's FIN and the channel's end. */
    static final class Sink extends ChannelInboundHandlerAdapter {
        final AtomicLong count = new AtomicLong();
        final CompletableFuture<Long> inputShutdown = new CompletableFuture<>();
        final CompletableFuture<Void> inactive = new CompletableFuture<>();
        private final MessageDigest sha = sha256();
        private final ByteArrayOutputStream kept;

        Sink(boolean keep) {
            this.kept = keep ? new ByteArrayOutputStream() : null;
        }

        synchronized String text() {
            return kept.toString(StandardCharsets.UTF_8);
        }

        synchronized String sha256Hex() {
            try {
                return HexFormat.of().formatHex(((MessageDigest) sha.clone()).digest());
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                byte[] a = new byte[b.readableBytes()];
                b.readBytes(a);
                synchronized (this) {
                    sha.update(a);
                    if (kept != null) {
                        kept.writeBytes(a);
                    }
                }
                count.addAndGet(a.length);
            } finally {
                b.release();
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownEvent) {
                inputShutdown.complete(count.get());
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            inactive.complete(null);
            ctx.fireChannelInactive();
        }
    }

    /**
     * Writes {@code size} seeded pseudo-random bytes while the channel is writable (so the send
     * window paces it), then shuts the output down (FIN) and keeps the channel open for reading.
     * {@link #finQueued} completes with the number of bytes the paired {@link Sink} had received
     * when the FIN was queued.
     */
    static final class Source extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Long> finQueued = new CompletableFuture<>();
        private final MessageDigest sha = sha256();
        private final Random rnd;
        private final Sink sink;
        private long left;
        private boolean finished;
        private volatile String digest;

        Source(long size, long seed, Sink sink) {
            this.left = size;
            this.rnd = new Random(seed);
            this.sink = sink;
        }

        /** SHA-256 of everything written; valid once {@link #finQueued} completed. */
        String sha256Hex() {
            return digest;
        }

        void start(Channel ch) {
            ch.eventLoop().execute(() -> pump(ch));
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            pump(ctx.channel());
            ctx.fireChannelWritabilityChanged();
        }

        private void pump(Channel ch) {
            while (left > 0 && ch.isWritable()) {
                byte[] b = new byte[(int) Math.min(64 * 1024, left)];
                rnd.nextBytes(b);
                sha.update(b);
                left -= b.length;
                ch.writeAndFlush(Unpooled.wrappedBuffer(b)).addListener(f -> {
                    if (!f.isSuccess()) {
                        finQueued.completeExceptionally(f.cause());
                    }
                });
            }
            if (left == 0 && !finished) {
                finished = true;
                digest = HexFormat.of().formatHex(sha.digest());
                long receivedSoFar = sink.count.get();
                ((MuxStreamChannel) ch).shutdownOutput().addListener(f -> {
                    if (f.isSuccess()) {
                        finQueued.complete(receivedSoFar);
                    } else {
                        finQueued.completeExceptionally(f.cause());
                    }
                });
            }
        }
    }
}
