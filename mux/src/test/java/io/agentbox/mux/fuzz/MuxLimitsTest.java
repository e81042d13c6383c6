package io.agentbox.mux.fuzz;

import static io.agentbox.mux.frame.YamuxFrames.FLAG_RST;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_SYN;
import static io.agentbox.mux.frame.YamuxFrames.INITIAL_STREAM_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.MAX_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_DATA;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_PING;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_WINDOW_UPDATE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.frame.FrameEncoder;
import io.agentbox.mux.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The hostile-input limits, one by one (docs/tunnel-protocol.md, "Our choices"). */
class MuxLimitsTest {

    private static final int W = INITIAL_STREAM_WINDOW;
    private final Map<Integer, Channel> accepted = new ConcurrentHashMap<>();

    private MuxSession server(MuxConfig config, FuzzPeer peer) {
        // holds every stream without reading: inbound data stays buffered in the session
        return MuxSession.start(MuxRole.SERVER, config, peer, (s, ch) -> {
            ch.config().setAutoRead(false);
            accepted.put(((io.agentbox.mux.MuxStreamChannel) ch).streamId(), ch);
        });
    }

    private static MuxConfig.Builder base() {
        return MuxConfig.builder().keepAliveInterval(Duration.ZERO);
    }

    private static void inject(MuxSession s, int type, int flags, int id, int length, int payloadBytes) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.writeHeader(b, type, flags, id, length);
        b.writeZero(payloadBytes);
        s.receive(b.nioBuffer());
    }

    @Test
    void sessionReceiveBufferCapResetsTheStreamWhoseDataWouldOverflowIt() throws Exception {
        FuzzPeer peer = new FuzzPeer(false);
        MuxSession s = server(base().maxSessionReceiveBuffer(W + W / 2).build(), peer);
        inject(s, TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0, 0);
        inject(s, TYPE_WINDOW_UPDATE, FLAG_SYN, 3, 0, 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> accepted.size() == 2);
        inject(s, TYPE_DATA, 0, 1, W, W); // a full window on stream 1: within the cap
        assertThat(s.bufferedInboundBytes()).isEqualTo(W);
        CompletableFuture<Throwable> closed3 = new CompletableFuture<>();
        accepted.get(3).pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                closed3.complete(cause);
            }
        });
        accepted.get(3).closeFuture().addListener(f -> closed3.complete(null));
        inject(s, TYPE_DATA, 0, 3, W, W); // would make 2 W > 1.5 W: stream 3 is reset, payload skipped
        assertThat(s.bufferedInboundBytes()).isEqualTo(W);
        closed3.get(5, TimeUnit.SECONDS);
        assertThat(peer.sent()).contains(FrameHeader.of(TYPE_WINDOW_UPDATE, FLAG_RST, 3, 0));
        assertThat(s.isOpen()).as("the session and stream 1 go on").isTrue();
        assertThat(accepted.get(1).isActive()).isTrue();
        // more data for the reset stream is discarded like any unknown stream
        inject(s, TYPE_DATA, 0, 3, 10, 10);
        assertThat(s.bufferedInboundBytes()).isEqualTo(W);
        // consuming stream 1 releases its share of the buffer
        AtomicLong read = new AtomicLong();
        Channel ch1 = accepted.get(1);
        ch1.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                read.addAndGet(((ByteBuf) msg).readableBytes());
                ((ByteBuf) msg).release();
            }
        });
        ch1.read();
        await().atMost(5, TimeUnit.SECONDS).until(() -> s.bufferedInboundBytes() == 0);
        assertThat(read.get()).isEqualTo(W);
        s.close();
    }

    @Test
    void bufferedBytesAreReleasedWhenTheSessionEnds() throws Exception {
        FuzzPeer peer = new FuzzPeer(false);
        MuxSession s = server(base().build(), peer);
        inject(s, TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0, 0);
        inject(s, TYPE_DATA, 0, 1, 1000, 1000);
        // a frame cut in the middle of its payload is reserved in full, then released on end
        inject(s, TYPE_DATA, 0, 1, 5000, 10);
        assertThat(s.bufferedInboundBytes()).isEqualTo(6000);
        s.transportClosed(null);
        await().atMost(5, TimeUnit.SECONDS).until(() -> s.bufferedInboundBytes() == 0 && s.streamCount() == 0);
    }

    @Test
    void windowUpdatePastTwoToThe32IsAProtocolError() throws Exception {
        FuzzPeer peer = new FuzzPeer(false);
        MuxSession s = server(base().build(), peer);
        inject(s, TYPE_WINDOW_UPDATE, FLAG_SYN, 1, 0, 0);
        // exactly up to 2^32-1 is fine
        inject(s, TYPE_WINDOW_UPDATE, 0, 1, (int) (MAX_WINDOW - W), 0);
        assertThat(s.isOpen()).isTrue();
        inject(s, TYPE_WINDOW_UPDATE, 0, 1, 1, 0);
        s.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.goAways()).containsExactly(1L);
    }

    @Test
    void synCarryingAWindowPastTwoToThe32IsAProtocolError() throws Exception {
        FuzzPeer peer = new FuzzPeer(false);
        MuxSession s = server(base().build(), peer);
        inject(s, TYPE_WINDOW_UPDATE, FLAG_SYN, 1, (int) (MAX_WINDOW - W + 1), 0);
        s.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.goAways()).containsExactly(1L);
        assertThat(accepted).isEmpty();
    }

    @Test
    void pingsFasterThanWeCanAnswerAreAFlood() throws Exception {
        FuzzPeer peer = new FuzzPeer(true); // the peer does not read: our replies stay queued
        MuxSession s = server(base().maxPendingPingReplies(8).build(), peer);
        for (int i = 0; i < 8; i++) {
            inject(s, TYPE_PING, FLAG_SYN, 0, i, 0);
        }
        assertThat(s.isOpen()).as("8 unanswered pings are within the cap").isTrue();
        inject(s, TYPE_PING, FLAG_SYN, 0, 8, 0);
        s.closeFuture().get(5, TimeUnit.SECONDS);
        peer.unstall();
        List<Long> goAways = peer.goAways();
        assertThat(goAways).containsExactly(1L);
    }

    @Test
    void pingRepliesThatGetWrittenFreeTheirSlots() {
        FuzzPeer peer = new FuzzPeer(false);
        MuxSession s = server(base().maxPendingPingReplies(2).build(), peer);
        for (int i = 0; i < 100; i++) {
            inject(s, TYPE_PING, FLAG_SYN, 0, i, 0);
        }
        assertThat(s.isOpen()).isTrue();
        assertThat(peer.sent()).hasSize(100);
    }

    @Test
    void theSessionCapMustHoldAtLeastOneWindow() {
        assertThatThrownBy(() -> base().maxSessionReceiveBuffer(W - 1).build()).isInstanceOf(IllegalArgumentException.class);
        assertThat(MuxConfig.defaults().maxSessionReceiveBuffer()).isEqualTo(64L << 20);
        assertThat(MuxConfig.defaults().maxPendingPingReplies()).isEqualTo(256);
    }
}
