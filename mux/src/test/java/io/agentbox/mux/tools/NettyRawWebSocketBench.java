package io.agentbox.mux.tools;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.netty.MaskedFrames;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/** The Netty half of {@link RawWebSocketBench}: same protocol, Netty's WebSocket client. */
final class NettyRawWebSocketBench {

    private NettyRawWebSocketBench() {
    }

    static MuxBenchResult.Throughput run(URI echoUri, long bytes, int messageSize, Duration timeout)
            throws IOException, InterruptedException {
        byte[] chunk = new byte[messageSize];
        for (int i = 0; i < chunk.length; i++) {
            chunk[i] = (byte) i;
        }
        Counter counter = new Counter(bytes);
        Channel ch = NettyWebSocketClient.dial(echoUri, null, MuxConfig.defaults().maxTransportMessageBytes(),
                timeout, counter, counter.done::completeExceptionally);
        try {
            RawWebSocketBench.await(counter.open, timeout, "connect to " + echoUri);
            ByteBuf source = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(chunk));
            long start = System.nanoTime();
            ch.eventLoop().execute(() -> send(ch, source, bytes, counter.done));
            RawWebSocketBench.awaitEcho(counter.done, counter.received, bytes, timeout);
            long elapsed = System.nanoTime() - start;
            return new MuxBenchResult.Throughput(1, bytes, counter.received.get(), elapsed);
        } finally {
            ch.close();
        }
    }

    /**
     * One message in flight; the next from the previous one's completion (on the event loop). Each
     * message is copied and masked the way the mux's client transport does it ({@link MaskedFrames}),
     * so the two differ by the mux alone.
     */
    private static void send(Channel ch, ByteBuf source, long remaining, CompletableFuture<Void> failure) {
        if (remaining <= 0) {
            return;
        }
        int n = (int) Math.min(source.capacity(), remaining);
        ByteBuf payload = ch.alloc().directBuffer(n).writeBytes(source, 0, n);
        int key = MaskedFrames.newMaskKey();
        MaskedFrames.mask(payload, key);
        ch.write(MaskedFrames.header(ch.alloc(), n, key), ch.voidPromise());
        ch.writeAndFlush(payload).addListener(f -> {
            if (f.isSuccess()) {
                send(ch, source, remaining - n, failure);
            } else {
                failure.completeExceptionally(f.cause());
            }
        });
    }

    private static final class Counter extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Void> open = new CompletableFuture<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final AtomicLong received = new AtomicLong();
        private final long expected;

        Counter(long expected) {
            this.expected = expected;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                open.complete(null);
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof BinaryWebSocketFrame frame) {
                    long got = received.addAndGet(frame.content().readableBytes());
                    if (got == expected) {
                        done.complete(null);
                    } else if (got > expected) {
                        done.completeExceptionally(new IOException("echo returned " + got + " bytes, sent " + expected));
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            EOFException closed = new EOFException("WebSocket closed");
            open.completeExceptionally(closed);
            done.completeExceptionally(closed);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            open.completeExceptionally(cause);
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
