package io.agentbox.mux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.tools.StreamEcho;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Session scenarios over an in-memory transport pair (after Go's session_test.go). */
class MuxSessionTest {

    private static final Duration T = Duration.ofSeconds(20);
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    private MemoryTransportPair pair;

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    private MemoryTransportPair pair(MuxConfig config, MuxStreamAcceptor serverAcceptor) {
        pair = new MemoryTransportPair(config, (s, ch) -> accepted.add(ch), serverAcceptor);
        return pair;
    }

    private static MuxStreamAcceptor echo() {
        return (s, ch) -> {
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            ch.pipeline().addLast(new StreamEcho());
        };
    }

    private static Channel open(MuxSession s) throws Exception {
        return s.openStream().get(10, TimeUnit.SECONDS);
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    @Test
    void openAcceptEchoWithRoleParity() throws Exception {
        pair(MuxConfig.defaults(), echo());
        MuxStreamChannel a = (MuxStreamChannel) open(pair.client);
        MuxStreamChannel b = (MuxStreamChannel) open(pair.client);
        assertThat(a.streamId()).isEqualTo(1);
        assertThat(b.streamId()).isEqualTo(3);
        Collect got = new Collect(true);
        a.pipeline().addLast(got);
        a.writeAndFlush(ascii("hello"));
        await().atMost(T).until(() -> got.text().equals("hello"));

        MuxStreamChannel fromServer = (MuxStreamChannel) open(pair.server);
        assertThat(fromServer.streamId()).isEqualTo(2);
        Channel acceptedOnClient = accepted.poll(10, TimeUnit.SECONDS);
        assertThat(acceptedOnClient).isNotNull();
        assertThat(((MuxStreamChannel) acceptedOnClient).streamId()).isEqualTo(2);
        assertThat(acceptedOnClient.isActive()).isTrue();
    }

    @Test
    void halfCloseKeepsReadingUntilThePeerFinishes() throws Exception {
        pair(MuxConfig.defaults(), echo());
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        Collect got = new Collect(true);
        ch.pipeline().addLast(got);
        ch.write(ascii("half "));
        ch.writeAndFlush(ascii("closed"));
        ch.shutdownOutput().sync();
        assertThat(ch.isOutputShutdown()).isTrue();
        assertThatThrownBy(() -> ch.writeAndFlush(ascii("late")).sync()).isNotNull();
        // the echo answers after our FIN, then FINs itself: we read all of it, then the channel closes
        got.inputShutdown.get(10, TimeUnit.SECONDS);
        assertThat(got.text()).isEqualTo("half closed");
        got.inactive.get(10, TimeUnit.SECONDS);
        await().atMost(T).until(() -> pair.client.streamCount() == 0 && pair.server.streamCount() == 0);
    }

    @Test
    void aFinRequestedFromInsideAWriteFollowsThatWrite() throws Exception {
        // The interop Source pattern: the last write crosses the high water mark, Netty fires
        // channelWritabilityChanged from inside write() (before its flush), and the handler asks
        // for the FIN there. The FIN once left ahead of that unflushed write; the peer, at EOF,
        // dropped the bytes that followed (a 64 MiB interop transfer came up 32 KiB short).
        pair(MuxConfig.defaults(), echo());
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        ch.config().setWriteBufferWaterMark(new io.netty.channel.WriteBufferWaterMark(512, 1024));
        Collect got = new Collect(true);
        ch.pipeline().addLast(got, new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void channelWritabilityChanged(io.netty.channel.ChannelHandlerContext ctx) {
                if (!ctx.channel().isWritable()) {
                    ((MuxStreamChannel) ctx.channel()).shutdownOutput();
                }
                ctx.fireChannelWritabilityChanged();
            }
        });
        String last = "x".repeat(4096);
        ch.eventLoop().submit(() -> ch.writeAndFlush(ascii(last))).sync();
        got.inputShutdown.get(10, TimeUnit.SECONDS);
        assertThat(got.count.get()).as("echo bytes of the write that asked for the FIN").isEqualTo(last.length());
        assertThat(got.text()).isEqualTo(last);
    }

    @Test
    void resetOfAChannelThatNeverBecameAStreamJustClosesIt() {
        MuxStreamChannel ch = new MuxStreamChannel();
        assertThat(ch.reset().isSuccess()).isTrue();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.streamId()).isZero();
    }

    @Test
    void resetClosesThePeerChannel() throws Exception {
        pair(MuxConfig.defaults(), (s, ch) -> accepted.add(ch));
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        Channel serverSide = accepted.poll(10, TimeUnit.SECONDS);
        Collect peer = new Collect(true);
        serverSide.pipeline().addLast(peer);
        ch.reset().sync();
        peer.inactive.get(10, TimeUnit.SECONDS);
        assertThat(serverSide.isOpen()).isFalse();
        await().atMost(T).until(() -> pair.client.streamCount() == 0 && pair.server.streamCount() == 0);
    }

    @Test
    void refusedStreamFailsTheOpen() {
        pair(MuxConfig.defaults(), MuxStreamAcceptor.refuseAll());
        assertThatThrownBy(() -> open(pair.client))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(ConnectException.class);
    }

    @Test
    void pingRoundTripsBothWays() throws Exception {
        pair(MuxConfig.defaults(), echo());
        assertThat(pair.client.ping().get(10, TimeUnit.SECONDS)).isPositive();
        assertThat(pair.server.ping().get(10, TimeUnit.SECONDS)).isPositive();
    }

    @Test
    void countersShowBytesEachWayAndTheLastRoundTrip() throws Exception {
        pair(MuxConfig.defaults(), echo());
        assertThat(pair.client.lastRoundTrip()).isNull();
        Duration rtt = pair.client.ping().get(10, TimeUnit.SECONDS);
        assertThat(pair.client.lastRoundTrip()).isEqualTo(rtt);
        assertThat(pair.server.lastRoundTrip()).as("answering a ping measures nothing").isNull();

        long sentBefore = pair.client.bytesSent();
        long receivedBefore = pair.server.bytesReceived();
        Channel a = open(pair.client);
        Collect got = new Collect(true);
        a.pipeline().addLast(got);
        a.writeAndFlush(ascii("x".repeat(10_000)));
        await().atMost(T).until(() -> got.text().length() == 10_000);
        // payload plus 12-byte frame headers (SYN, data, window updates) each way
        assertThat(pair.client.bytesSent() - sentBefore).isGreaterThanOrEqualTo(10_000 + 12);
        await().atMost(T).until(() -> pair.server.bytesReceived() == pair.client.bytesSent());
        assertThat(pair.server.bytesReceived() - receivedBefore).isGreaterThanOrEqualTo(10_000 + 12);
        await().atMost(T).until(() -> pair.client.bytesReceived() == pair.server.bytesSent());
        assertThat(pair.server.bytesSent()).isGreaterThanOrEqualTo(10_000 + 12);
    }

    @Test
    void closeSendsGoAwayAndEndsBothSessionsAndTheirStreams() throws Exception {
        pair(MuxConfig.defaults(), echo());
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        pair.server.close();
        assertThat(pair.server.isOpen()).isFalse();
        pair.client.closeFuture().get(10, TimeUnit.SECONDS);
        pair.server.closeFuture().get(10, TimeUnit.SECONDS);
        ch.closeFuture().await(10, TimeUnit.SECONDS);
        assertThat(ch.isOpen()).isFalse();
        assertThatThrownBy(() -> open(pair.client)).hasCauseInstanceOf(ConnectException.class);
        assertThatThrownBy(() -> open(pair.server)).hasCauseInstanceOf(ConnectException.class);
        assertThat(pair.server.isLocalGoAway()).as("close sent GoAway(0)").isTrue();
        pair.server.goAway(); // a no-op once closed: no frame, no exception
        assertThat(pair.server.isOpen()).isFalse();
    }

    @Test
    void transportLossClosesAllStreams() throws Exception {
        pair(MuxConfig.defaults(), echo());
        List<Channel> streams = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            streams.add(open(pair.client));
        }
        pair.cut();
        pair.client.closeFuture().get(10, TimeUnit.SECONDS);
        for (Channel c : streams) {
            assertThat(c.closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(pair.client.streamCount()).isZero();
    }

    @Test
    void aConsumerThatDoesNotReadStopsTheSenderAtTheWindow() throws Exception {
        pair(MuxConfig.defaults(), (s, ch) -> {
            ch.config().setAutoRead(false);
            accepted.add(ch);
        });
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        int total = 1024 * 1024;
        byte[] data = new byte[total];
        new Random(1).nextBytes(data);
        int piece = 16 * 1024;
        for (int off = 0; off < total; off += piece) {
            ch.write(Unpooled.wrappedBuffer(data, off, piece));
        }
        ch.flush();
        Channel receiver = accepted.poll(10, TimeUnit.SECONDS);
        Collect got = new Collect(false);
        receiver.pipeline().addLast(got);

        // the sender holds exactly what exceeds the 256 KiB window (48 of 64 pieces), and is not writable
        await().atMost(T).until(() -> queuedPieces(ch) == 48);
        assertThat(ch.isWritable()).isFalse();
        assertThat(got.count.get()).isZero();

        receiver.read(); // one read delivers the window and returns half of it or more
        await().atMost(T).until(() -> got.count.get() == 256 * 1024);
        await().atMost(T).until(() -> queuedPieces(ch) == 32);

        receiver.config().setAutoRead(true);
        await().atMost(T).until(() -> got.count.get() == total);
        assertThat(got.sha256()).isEqualTo(sha256(data));
        await().atMost(T).until(ch::isWritable);
    }

    @Test
    void largeTransfersOnConcurrentStreamsArriveIntact() throws Exception {
        pair(MuxConfig.builder().initialStreamWindow(4 * 1024 * 1024).build(), echo());
        int streams = 8;
        int size = 4 * 1024 * 1024;
        List<Collect> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            Collect got = new Collect(false);
            ch.pipeline().addLast(got);
            results.add(got);
            byte[] data = new byte[size];
            new Random(i).nextBytes(data);
            expected.add(sha256(data));
            for (int off = 0; off < size; off += 100_000) {
                ch.write(Unpooled.wrappedBuffer(data, off, Math.min(100_000, size - off)));
            }
            ch.flush();
            ch.shutdownOutput();
        }
        for (int i = 0; i < streams; i++) {
            results.get(i).inputShutdown.get(60, TimeUnit.SECONDS);
            assertThat(results.get(i).count.get()).isEqualTo(size);
            assertThat(results.get(i).sha256()).isEqualTo(expected.get(i));
        }
    }

    @Test
    void peerFinWithoutHalfClosureClosesTheChannelAfterDelivery() throws Exception {
        pair(MuxConfig.defaults(), (s, ch) -> accepted.add(ch));
        MuxStreamChannel ch = (MuxStreamChannel) open(pair.client);
        Channel server = accepted.poll(10, TimeUnit.SECONDS);
        Collect got = new Collect(true);
        server.pipeline().addLast(got);
        ch.writeAndFlush(ascii("bye"));
        ch.close();
        got.inactive.get(10, TimeUnit.SECONDS);
        assertThat(got.text()).isEqualTo("bye");
        await().atMost(T).until(() -> pair.client.streamCount() == 0 && pair.server.streamCount() == 0);
    }

    @Test
    void socketOptionsAreAcceptedAndIgnored() {
        MuxStreamChannel ch = new MuxStreamChannel();
        assertThat(ch.config().setOption(ChannelOption.SO_KEEPALIVE, true)).isTrue();
        assertThat(ch.config().setOption(ChannelOption.TCP_NODELAY, true)).isTrue();
        assertThat(ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true)).isTrue();
        assertThat(ch.config().getOption(ChannelOption.ALLOW_HALF_CLOSURE)).isTrue();
    }

    private static int queuedPieces(MuxStreamChannel ch) throws Exception {
        return ch.eventLoop().submit(() -> ch.unsafe().outboundBuffer().size()).get();
    }

    static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }
}
