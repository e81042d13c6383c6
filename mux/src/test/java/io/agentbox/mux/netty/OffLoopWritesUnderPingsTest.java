package io.agentbox.mux.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.MuxStreamChannel;
import io.agentbox.mux.tools.StreamEcho;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import java.net.URI;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A Netty WebSocket client whose stream channels run on another event loop group than its socket
 * (as gRPC's channels do: they are registered on {@code MuxEventLoops.shared()}), while the server
 * floods it with WebSocket pings. The client masks its own frames and writes each as a header and
 * a payload; Netty answers every ping with a pong on the socket's loop. Written from a stream's
 * loop, the header and the payload were two separate tasks on the socket's loop, and a pong could
 * land between them: the server then read the pong's bytes as the payload's and the connection
 * broke. Every byte must come back intact over a session that stays up.
 */
class OffLoopWritesUnderPingsTest {

    private static final int STREAMS = 8;
    private static final long BYTES_PER_STREAM = 8L * 1024 * 1024;

    @Test
    void streamsOffTheSocketLoopKeepTheFramingIntactWhileTheServerPings() throws Exception {
        MuxStreamAcceptor echo = (session, ch) -> {
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            ch.pipeline().addLast(new StreamEcho());
        };
        AtomicLong pings = new AtomicLong();
        EventLoopGroup streamLoops = new DefaultEventLoopGroup(2);
        try (NettyWebSocketServer server = NettyWebSocketServer.builder().bind("127.0.0.1", 0)
                .route("/mux", rq -> new PingFlood(new MuxFrameHandler(MuxRole.SERVER, MuxConfig.defaults(), echo), pings))
                .start()) {
            MuxConfig clientConfig = MuxConfig.builder().eventLoopGroup(streamLoops).build();
            MuxSession client = NettyWebSocketClient.connect(URI.create("ws://127.0.0.1:" + server.address().getPort() + "/mux"),
                    null, MuxRole.CLIENT, clientConfig, null, Duration.ofSeconds(10)).get(20, TimeUnit.SECONDS);
            List<Trip> trips = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                MuxStreamChannel ch = (MuxStreamChannel) client.openStream().get(20, TimeUnit.SECONDS);
                assertThat(ch.eventLoop().inEventLoop()).isFalse();
                trips.add(Trip.start(ch, BYTES_PER_STREAM, i));
            }
            for (Trip t : trips) {
                assertThat(t.echoed.get(60, TimeUnit.SECONDS)).as("echo bytes on stream %d", t.ch.streamId())
                        .isEqualTo(BYTES_PER_STREAM);
                assertThat(t.sha256Received()).as("SHA-256 of the echo on stream %d", t.ch.streamId())
                        .isEqualTo(t.sha256Sent);
            }
            assertThat(client.isOpen()).as("client session still open").isTrue();
            assertThat(pings.get()).as("pings the server sent during the transfer").isGreaterThan(100);
            client.close();
        } finally {
            streamLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** Installs the mux handler behind itself and, once upgraded, keeps one ping in flight at a time. */
    private static final class PingFlood extends ChannelInboundHandlerAdapter {
        private final MuxFrameHandler mux;
        private final AtomicLong sent;

        PingFlood(MuxFrameHandler mux, AtomicLong sent) {
            this.mux = mux;
            this.sent = sent;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            ctx.pipeline().addAfter(ctx.name(), "mux", mux);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
                ping(ctx);
            }
            ctx.fireUserEventTriggered(evt);
        }

        private void ping(ChannelHandlerContext ctx) {
            if (!ctx.channel().isActive()) {
                return;
            }
            sent.incrementAndGet();
            ctx.writeAndFlush(new PingWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4})))
                    .addListener(f -> {
                        if (f.isSuccess()) {
                            ctx.executor().schedule(() -> ping(ctx), 50, TimeUnit.MICROSECONDS);
                        }
                    });
        }
    }

    /** Writes seeded random bytes while writable, then FIN; hashes what comes back until the peer's FIN. */
    private static final class Trip extends ChannelInboundHandlerAdapter {
        final MuxStreamChannel ch;
        final CompletableFuture<Long> echoed = new CompletableFuture<>();
        private final MessageDigest sent = sha();
        private final MessageDigest received = sha();
        private final Random rnd;
        private long left;
        private long got;
        private volatile String sha256Sent;
        private volatile String sha256Received;

        private Trip(MuxStreamChannel ch, long size, long seed) {
            this.ch = ch;
            this.left = size;
            this.rnd = new Random(seed);
        }

        static Trip start(MuxStreamChannel ch, long size, long seed) {
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            Trip t = new Trip(ch, size, seed);
            ch.pipeline().addLast(t);
            ch.eventLoop().execute(() -> t.pump(ch));
            return t;
        }

        String sha256Received() {
            return sha256Received;
        }

        private void pump(Channel c) {
            while (left > 0 && c.isWritable()) {
                byte[] b = new byte[(int) Math.min(64 * 1024, left)];
                rnd.nextBytes(b);
                sent.update(b);
                left -= b.length;
                c.writeAndFlush(Unpooled.wrappedBuffer(b));
            }
            if (left == 0 && sha256Sent == null) {
                sha256Sent = HexFormat.of().formatHex(sent.digest());
                ((MuxStreamChannel) c).shutdownOutput();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            pump(ctx.channel());
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                byte[] a = new byte[b.readableBytes()];
                b.readBytes(a);
                received.update(a);
                got += a.length;
            } finally {
                b.release();
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownEvent) {
                sha256Received = HexFormat.of().formatHex(received.digest());
                echoed.complete(got);
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            echoed.completeExceptionally(new AssertionError("stream " + ch.streamId() + " closed after " + got + " echo bytes"));
            ctx.fireChannelInactive();
        }

        private static MessageDigest sha() {
            try {
                return MessageDigest.getInstance("SHA-256");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }
    }
}
