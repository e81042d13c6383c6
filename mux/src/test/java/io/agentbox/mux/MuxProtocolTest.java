package io.agentbox.mux;

import static io.agentbox.mux.frame.YamuxFrames.FLAG_ACK;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_FIN;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_RST;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_SYN;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_DATA;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_GO_AWAY;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_PING;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_WINDOW_UPDATE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.frame.FrameHeader;
import io.netty.channel.Channel;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Wire-level behaviour against a scripted peer (docs/tunnel-protocol.md#behaviour-of-the-go-library). */
class MuxProtocolTest {

    private static final MuxConfig NO_KEEPALIVE = MuxConfig.builder().keepAliveInterval(Duration.ZERO).build();
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();

    private RawPeer serverUnderTest(MuxConfig config) {
        return RawPeer.start(MuxRole.SERVER, config, (s, ch) -> accepted.add(ch));
    }

    private static void assertFrame(RawPeer.Frame f, int type, int flags, int stream, int length) {
        assertThat(f.header()).isEqualTo(FrameHeader.of(type, flags, stream, length));
    }

    @Test
    void opensLikeGoWithTheWindowSurplusOnSynAndAck() throws Exception {
        MuxConfig big = MuxConfig.builder().keepAliveInterval(Duration.ZERO).initialStreamWindow(4 * 1024 * 1024).build();
        RawPeer peer = RawPeer.start(MuxRole.CLIENT, big, null);
        var opened = peer.session.openStream();
        RawPeer.Frame syn = peer.next();
        assertThat(HexFormat.of().formatHex(header(syn))).isEqualTo("0001000100000001003c0000");
        assertThat(opened).isNotDone();
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        assertThat(opened.get(5, TimeUnit.SECONDS).isActive()).isTrue();

        RawPeer server = RawPeer.start(MuxRole.SERVER, big, (s, ch) -> { });
        server.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertThat(HexFormat.of().formatHex(header(server.next()))).isEqualTo("0001000200000001003c0000");
    }

    private static byte[] header(RawPeer.Frame f) {
        ByteBuffer b = ByteBuffer.allocate(12);
        b.put((byte) 0).put((byte) f.header().type()).putShort((short) f.header().flags())
                .putInt(f.header().streamId()).putInt(f.header().length());
        return b.array();
    }

    @Test
    void pingSynIsAnsweredWithPingAckCarryingTheOpaqueValue() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_PING, FLAG_SYN, 0, 0xCAFE);
        assertFrame(peer.next(), TYPE_PING, FLAG_ACK, 0, 0xCAFE);
    }

    @Test
    void combinedSynDataFinIsFullyHonoured() throws Exception {
        Collect got = new Collect(true);
        RawPeer peer = RawPeer.start(MuxRole.SERVER, NO_KEEPALIVE, (s, ch) -> ch.pipeline().addLast(got));
        byte[] hello = "hello".getBytes(StandardCharsets.US_ASCII);
        peer.inject(TYPE_DATA, FLAG_SYN | FLAG_FIN, 1, hello.length, hello);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        got.inputShutdown.get(5, TimeUnit.SECONDS);
        assertThat(got.text()).isEqualTo("hello");
        // without half-closure the channel closes after the peer's FIN, sending our FIN
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_FIN, 1, 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> peer.session.streamCount() == 0);
    }

    @Test
    void remoteGoAwayZeroStopsNewStreamsButKeepsExistingOnes() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        peer.inject(TYPE_GO_AWAY, 0, 0, 0);
        assertThat(peer.session.isRemoteGoAway()).isTrue();
        assertThatThrownBy(() -> peer.session.openStream().get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(ConnectException.class);
        Collect got = new Collect(true);
        ch.pipeline().addLast(got);
        peer.inject(TYPE_DATA, 0, 1, 2, (byte) 'o', (byte) 'k');
        await().atMost(5, TimeUnit.SECONDS).until(() -> got.text().equals("ok"));
        assertThat(peer.session.isOpen()).isTrue();
    }

    @Test
    void localGoAwaySendsGoAwayZeroOnceThenRefusesNewSynsButKeepsExistingStreams() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);

        peer.session.goAway();
        assertThat(HexFormat.of().formatHex(header(peer.next()))).isEqualTo("000300000000000000000000");
        assertThat(peer.session.isLocalGoAway()).isTrue();
        assertThat(peer.session.isOpen()).isTrue();
        assertThat(peer.transportClosed).isFalse();
        peer.session.goAway(); // idempotent: no second frame
        assertThat(peer.sent.poll(200, TimeUnit.MILLISECONDS)).isNull();

        // a later SYN (also one carrying data) is refused with RST and never reaches the acceptor
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 3, 0);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_RST, 3, 0);
        peer.inject(TYPE_DATA, FLAG_SYN, 5, 2, (byte) 'n', (byte) 'o');
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_RST, 5, 0);
        assertThat(accepted).isEmpty();

        // the existing stream goes on in both directions
        Collect got = new Collect(true);
        ch.pipeline().addLast(got);
        peer.inject(TYPE_DATA, 0, 1, 2, (byte) 'o', (byte) 'k');
        await().atMost(5, TimeUnit.SECONDS).until(() -> got.text().equals("ok"));
        ch.writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(new byte[] {'h', 'i'}));
        RawPeer.Frame data = peer.next();
        assertFrame(data, TYPE_DATA, 0, 1, 2);
        assertThat(new String(data.payload(), StandardCharsets.US_ASCII)).isEqualTo("hi");

        // our own opens still work (GoAway only concerns the peer's opens, as in Go)
        var opened = peer.session.openStream();
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_SYN, 2, 0);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_ACK, 2, 0);
        assertThat(opened.get(5, TimeUnit.SECONDS).isActive()).isTrue();
        assertThat(peer.session.isOpen()).isTrue();

        // close() still ends the session with its own GoAway(0)
        peer.session.close();
        assertFrame(peer.next(), TYPE_GO_AWAY, 0, 0, 0);
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
        await().atMost(5, TimeUnit.SECONDS).until(() -> peer.transportClosed);
        assertThat(ch.closeFuture().await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void remoteGoAwayWithErrorEndsTheSession() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        peer.inject(TYPE_GO_AWAY, 0, 0, 2);
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(ch.closeFuture().await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(peer.transportClosed).isTrue();
    }

    @Test
    void invalidVersionOrTypeIsAnsweredWithGoAwayProtocolErrorAndClose() throws Exception {
        for (String bad : new String[] {"010000000000000100000000", "000700000000000000000000"}) {
            RawPeer peer = serverUnderTest(NO_KEEPALIVE);
            peer.session.receive(ByteBuffer.wrap(HexFormat.of().parseHex(bad)));
            assertFrame(peer.next(), TYPE_GO_AWAY, 0, 0, 1);
            peer.session.closeFuture().get(5, TimeUnit.SECONDS);
            await().atMost(5, TimeUnit.SECONDS).until(() -> peer.transportClosed);
        }
    }

    @Test
    void dataBeyondTheGrantedWindowIsAProtocolError() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        // header only: the length is checked before any payload is buffered
        peer.inject(TYPE_DATA, 0, 1, 256 * 1024 + 1);
        assertFrame(peer.next(), TYPE_GO_AWAY, 0, 0, 1);
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
    }

    @Test
    void duplicateSynIsAProtocolError() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertFrame(peer.next(), TYPE_GO_AWAY, 0, 0, 1);
    }

    @Test
    void backlogOverflowIsAnsweredWithRst() throws Exception {
        MuxConfig small = MuxConfig.builder().keepAliveInterval(Duration.ZERO).acceptBacklog(3).build();
        // an acceptor that never registers: every stream stays in the backlog
        MuxChildAcceptor holding = (s, ch) -> accepted.add(ch);
        RawPeer peer = RawPeer.start(MuxRole.SERVER, small, holding);
        for (int id = 1; id <= 7; id += 2) {
            peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, id, 0);
        }
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_RST, 7, 0);
        assertThat(accepted).hasSize(3);
        assertThat(peer.sent).isEmpty(); // unregistered streams are not ACKed yet
    }

    @Test
    void framesForUnknownStreamsAreDiscardedSilently() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_DATA, 0, 41, 3, (byte) 1, (byte) 2, (byte) 3);
        peer.inject(TYPE_WINDOW_UPDATE, 0, 41, 100);
        peer.inject(TYPE_PING, FLAG_SYN, 0, 7);
        // the only answer is to the ping: the data payload was skipped and nothing was RST
        assertFrame(peer.next(), TYPE_PING, FLAG_ACK, 0, 7);
        assertThat(peer.sent.poll(200, TimeUnit.MILLISECONDS)).isNull();
        assertThat(peer.session.isOpen()).isTrue();
    }

    @Test
    void windowUpdatesFollowConsumptionInHalfWindowChunks() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        Collect got = new Collect(false);
        ch.pipeline().addLast(got);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        byte[] chunk = new byte[64 * 1024];
        peer.inject(TYPE_DATA, 0, 1, chunk.length, chunk);
        await().atMost(5, TimeUnit.SECONDS).until(() -> got.count.get() == chunk.length);
        assertThat(peer.sent.poll(200, TimeUnit.MILLISECONDS)).as("64 KiB is below half the window").isNull();
        peer.inject(TYPE_DATA, 0, 1, chunk.length, chunk);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, 0, 1, 128 * 1024);
    }

    @Test
    void bytesArrivingAfterOurCloseAreCreditedAndDropped() throws Exception {
        RawPeer peer = serverUnderTest(NO_KEEPALIVE);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        ch.close().sync();
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_FIN, 1, 0);
        peer.inject(TYPE_DATA, 0, 1, 4, new byte[4]);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, 0, 1, 4);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_FIN, 1, 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> peer.session.streamCount() == 0);
    }

    @Test
    void aPeerThatNeverFinsGetsRstAfterTheCloseTimeout() throws Exception {
        MuxConfig quick = MuxConfig.builder().keepAliveInterval(Duration.ZERO).streamCloseTimeout(Duration.ofSeconds(1)).build();
        RawPeer peer = RawPeer.start(MuxRole.SERVER, quick, (s, ch) -> accepted.add(ch));
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        ch.close();
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_FIN, 1, 0);
        assertThat(peer.session.streamCount()).isEqualTo(1);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_RST, 1, 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> peer.session.streamCount() == 0);
    }

    @Test
    void anOpenWithoutAckTimesOutAndIsReset() throws Exception {
        RawPeer peer = RawPeer.start(MuxRole.CLIENT, NO_KEEPALIVE, null);
        MuxStreamChannel ch = new MuxStreamChannel();
        ch.config().setConnectTimeoutMillis(200);
        MuxEventLoops.shared().register(ch).sync();
        var connect = ch.connect(new SessionAddress(peer.session));
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertThat(connect.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(connect.cause()).isInstanceOf(io.netty.channel.ConnectTimeoutException.class);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_RST, 1, 0);
    }

    @Test
    void rstRightAfterSynRefusesTheOpen() throws Exception {
        RawPeer peer = RawPeer.start(MuxRole.CLIENT, NO_KEEPALIVE, null);
        var opened = peer.session.openStream();
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_RST, 1, 0);
        assertThatThrownBy(() -> opened.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(ConnectException.class);
        await().atMost(5, TimeUnit.SECONDS).until(() -> peer.session.streamCount() == 0);
    }

    @Test
    void keepAlivePingsAndEndsTheSessionWhenNoAckComes() throws Exception {
        MuxConfig fast = MuxConfig.builder().keepAliveInterval(Duration.ofMillis(100)).keepAliveTimeout(Duration.ofMillis(300)).build();
        RawPeer peer = RawPeer.start(MuxRole.CLIENT, fast, null);
        RawPeer.Frame ping = peer.next();
        assertThat(ping.header().type()).isEqualTo(TYPE_PING);
        assertThat(ping.header().flags()).isEqualTo(FLAG_SYN);
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.transportClosed).isTrue();
    }

    @Test
    void aSilentPeerGetsGoAwayBeforeTheTransportCloses() throws Exception {
        MuxConfig fast = MuxConfig.builder().keepAliveInterval(Duration.ofMillis(200)).keepAliveTimeout(Duration.ofMillis(600)).build();
        RawPeer peer = RawPeer.start(MuxRole.CLIENT, fast, null);
        long start = System.nanoTime();
        assertThat(peer.next().header().type()).isEqualTo(TYPE_PING);
        RawPeer.Frame goAway = peer.next();
        assertFrame(goAway, TYPE_GO_AWAY, 0, 0, 0);
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.transportClosed).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(550);
    }

    @Test
    void aBusyLinkWhosePingAcksAreLateIsNotCut() throws Exception {
        MuxConfig fast = MuxConfig.builder().keepAliveInterval(Duration.ofMillis(100)).keepAliveTimeout(Duration.ofMillis(400)).build();
        RawPeer peer = RawPeer.start(MuxRole.SERVER, fast, (s, ch) -> { });
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        byte[] chunk = new byte[100];
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < end) { // data keeps flowing, ping ACKs never come
            peer.inject(TYPE_DATA, 0, 1, chunk.length, chunk);
            Thread.sleep(50);
        }
        assertThat(peer.session.isOpen()).as("session open after 2 s of data without a ping ACK").isTrue();
        assertThat(peer.transportClosed).isFalse();
        // once the data stops, the silence ends the session
        peer.session.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.transportClosed).isTrue();
    }

    @Test
    void writesStalledByAHalfClosedPeerThatGrantsNoWindowFailAndTheStreamIsReset() throws Exception {
        MuxConfig quick = MuxConfig.builder().keepAliveInterval(Duration.ZERO).streamWriteTimeout(Duration.ofMillis(500)).build();
        RawPeer peer = serverUnderTest(quick);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0);
        assertFrame(peer.next(), TYPE_WINDOW_UPDATE, FLAG_ACK, 1, 0);
        Channel ch = accepted.poll(5, TimeUnit.SECONDS);
        ch.config().setOption(io.netty.channel.ChannelOption.ALLOW_HALF_CLOSURE, true);
        peer.inject(TYPE_WINDOW_UPDATE, FLAG_FIN, 1, 0); // the peer half-closes and never reads again
        var write = ch.writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(new byte[256 * 1024 + 1000]));
        assertThat(write.await(5, TimeUnit.SECONDS)).as("write completed or failed").isTrue();
        assertThat(write.cause()).isInstanceOf(java.io.IOException.class).hasMessageContaining("write timed out");
        RawPeer.Frame f;
        do {
            f = peer.next();
        } while (f.header().type() == TYPE_DATA);
        assertFrame(f, TYPE_WINDOW_UPDATE, FLAG_RST, 1, 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> !ch.isOpen() && peer.session.streamCount() == 0);
    }
}
