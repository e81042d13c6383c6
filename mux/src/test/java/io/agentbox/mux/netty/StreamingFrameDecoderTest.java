package io.agentbox.mux.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The streaming decoder against Netty's own frame encoder as the reference writer: the bytes of
 * binary messages come out unmasked and in order however the wire is cut, control frames come out
 * whole, text is dropped, and protocol violations close the connection with the right status.
 */
class StreamingFrameDecoderTest {

    private static final long MAX = 1 << 20;

    /** The wire bytes Netty writes for {@code frames}, masked as a client does when {@code mask}. */
    private static byte[] wire(boolean mask, WebSocketFrame... frames) {
        EmbeddedChannel enc = new EmbeddedChannel(new WebSocket08FrameEncoder(mask));
        for (WebSocketFrame f : frames) {
            enc.writeOutbound(f);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object o; (o = enc.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            out.writeBytes(ByteBufUtil.getBytes(b));
            b.release();
        }
        enc.finishAndReleaseAll();
        return out.toByteArray();
    }

    private static BinaryWebSocketFrame binary(byte[] data, boolean fin) {
        return new BinaryWebSocketFrame(fin, 0, Unpooled.wrappedBuffer(data));
    }

    /** Feeds {@code wire} in pieces cut at {@code cuts} (ascending offsets); returns what came out. */
    private static List<Object> feed(EmbeddedChannel ch, byte[] wire, int... cuts) {
        int from = 0;
        for (int i = 0; i <= cuts.length; i++) {
            int to = i < cuts.length ? cuts[i] : wire.length;
            ByteBuf piece = ch.alloc().directBuffer(to - from + 3);
            piece.writeBytes(new byte[3]).readerIndex(3); // a piece that does not start at index 0
            piece.writeBytes(wire, from, to - from);
            ch.writeInbound(piece);
            from = to;
        }
        List<Object> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add(o);
        }
        return out;
    }

    private static byte[] bytesOf(List<Object> out) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (Object o : out) {
            if (o instanceof ByteBuf buf) {
                b.writeBytes(ByteBufUtil.getBytes(buf));
                buf.release();
            }
        }
        return b.toByteArray();
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void maskedBinaryFramesComeOutUnmaskedInOrderWhereverTheWireIsCut() {
        byte[] a = random(70_001, 1);
        byte[] b = random(126, 2);
        byte[] c = random(5, 3);
        byte[] w = wire(true, binary(a, true), binary(b, false), new ContinuationWebSocketFrame(true, 0, Unpooled.wrappedBuffer(c)));
        byte[] expected = new byte[a.length + b.length + c.length];
        System.arraycopy(a, 0, expected, 0, a.length);
        System.arraycopy(b, 0, expected, a.length, b.length);
        System.arraycopy(c, 0, expected, a.length + b.length, c.length);
        Random rnd = new Random(11);
        for (int round = 0; round < 50; round++) {
            int[] cuts = rnd.ints(round % 7, 1, w.length).sorted().distinct().toArray();
            EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(true, MAX));
            assertThat(bytesOf(feed(ch, w, cuts))).as("cuts %s", java.util.Arrays.toString(cuts)).isEqualTo(expected);
            assertThat(ch.isOpen()).isTrue();
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void everyCutOfTheHeaderAndOfTheFirstKeyPeriodIsHandled() {
        byte[] a = random(300, 4);
        byte[] w = wire(true, binary(a, true));
        for (int cut = 1; cut < 20; cut++) {
            EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(true, MAX));
            assertThat(bytesOf(feed(ch, w, cut, cut + 1, cut + 6))).as("cut at %d", cut).isEqualTo(a);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aClientReadsUnmaskedServerFrames() {
        byte[] a = random(1000, 5);
        EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(false, MAX));
        assertThat(bytesOf(feed(ch, wire(false, binary(a, true)), 7, 500))).isEqualTo(a);
        ch.finishAndReleaseAll();
    }

    @Test
    void controlFramesComeOutWholeBetweenPiecesOfData() {
        byte[] a = random(40, 6);
        byte[] w = wire(true, binary(a, false),
                new PingWebSocketFrame(Unpooled.copiedBuffer("ping!", StandardCharsets.US_ASCII)),
                new PongWebSocketFrame(Unpooled.EMPTY_BUFFER),
                new ContinuationWebSocketFrame(true, 0, Unpooled.wrappedBuffer(a)));
        EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(true, MAX));
        List<Object> out = feed(ch, w, 3, 50, 53);
        assertThat(out).hasSize(4);
        assertThat(out.get(1)).isInstanceOf(PingWebSocketFrame.class);
        assertThat(((PingWebSocketFrame) out.get(1)).content().toString(StandardCharsets.US_ASCII)).isEqualTo("ping!");
        assertThat(out.get(2)).isInstanceOf(PongWebSocketFrame.class);
        assertThat(((PongWebSocketFrame) out.get(2)).content().readableBytes()).isZero();
        ((WebSocketFrame) out.get(1)).release();
        ((WebSocketFrame) out.get(2)).release();
        byte[] twice = new byte[80];
        System.arraycopy(a, 0, twice, 0, 40);
        System.arraycopy(a, 0, twice, 40, 40);
        assertThat(bytesOf(out)).isEqualTo(twice);
        ch.finishAndReleaseAll();
    }

    @Test
    void textMessagesAreDroppedAndInputAfterACloseFrameIsIgnored() {
        byte[] a = random(10, 7);
        byte[] w = wire(true, new TextWebSocketFrame(false, 0, "hello "),
                new ContinuationWebSocketFrame(true, 0, Unpooled.copiedBuffer("world", StandardCharsets.UTF_8)),
                binary(a, true),
                new CloseWebSocketFrame(WebSocketCloseStatus.NORMAL_CLOSURE, "bye"),
                binary(a, true));
        EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(true, MAX));
        List<Object> out = feed(ch, w);
        assertThat(out).hasSize(2);
        CloseWebSocketFrame close = (CloseWebSocketFrame) out.get(1);
        assertThat(close.statusCode()).isEqualTo(1000);
        assertThat(close.reasonText()).isEqualTo("bye");
        close.release();
        assertThat(bytesOf(out)).isEqualTo(a);
        ch.finishAndReleaseAll();
    }

    /**
     * What the decoder wrote before it closed the channel: the close frame's status code. Payload
     * bytes of the offending frame (all of {@code w} after its valid frames) never come out.
     */
    private static int closedWith(byte[] w, boolean expectMasked, long max) {
        EmbeddedChannel ch = new EmbeddedChannel(new StreamingFrameDecoder(expectMasked, max));
        assertThat(bytesOf(feed(ch, w)).length).isLessThanOrEqualTo(200);
        CloseWebSocketFrame sent = ch.readOutbound();
        assertThat(ch.isOpen()).isFalse();
        int status = sent.statusCode();
        sent.release();
        ch.finishAndReleaseAll();
        return status;
    }

    @Test
    void protocolViolationsCloseWith1002AndOversizeFramesWith1009() {
        byte[] data = random(200, 8);
        assertThat(closedWith(wire(false, binary(data, true)), true, MAX)).as("unmasked from a client").isEqualTo(1002);
        assertThat(closedWith(wire(true, binary(data, true)), false, MAX)).as("masked from a server").isEqualTo(1002);
        assertThat(closedWith(wire(true, binary(data, true)), true, 100)).as("over the limit").isEqualTo(1009);
        assertThat(closedWith(wire(true, new ContinuationWebSocketFrame(true, 0, Unpooled.wrappedBuffer(data))), true, MAX))
                .as("continuation first").isEqualTo(1002);
        assertThat(closedWith(wire(true, binary(data, false), binary(data, true)), true, MAX))
                .as("new message inside a fragmented one").isEqualTo(1002);
        assertThat(closedWith(wire(true, new BinaryWebSocketFrame(true, 4, Unpooled.wrappedBuffer(data))), true, MAX))
                .as("RSV bit").isEqualTo(1002);
        assertThat(closedWith(new byte[] {(byte) 0x83, (byte) 0x80, 1, 2, 3, 4}, true, MAX)).as("opcode 3").isEqualTo(1002);
        assertThat(closedWith(new byte[] {(byte) 0x09, (byte) 0x80, 1, 2, 3, 4}, true, MAX)).as("fragmented ping").isEqualTo(1002);
        assertThat(closedWith(new byte[] {(byte) 0x89, (byte) 0xFE, 0, (byte) 200, 1, 2, 3, 4}, true, MAX))
                .as("ping of 200 bytes").isEqualTo(1002);
    }

    @Test
    void installReplacesNettysDecoder() {
        byte[] a = random(5000, 9);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast("wsdecoder", new WebSocket13FrameDecoder(true, false, (int) MAX));
        StreamingFrameDecoder.install(ch.pipeline(), true, MAX);
        assertThat(ch.pipeline().get(WebSocketFrameDecoder.class)).isNull();
        assertThat(ch.pipeline().get(StreamingFrameDecoder.class)).isNotNull();
        assertThat(bytesOf(feed(ch, wire(true, binary(a, true)), 1000))).isEqualTo(a);
        ch.finishAndReleaseAll();
    }
}
