package io.agentbox.mux.frame;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Golden vectors from docs/tunnel-protocol.md#golden-vectors (hashicorp/yamux over net.Pipe). */
class FrameCodecTest {

    private static final HexFormat HEX = HexFormat.of();

    /** The whole golden conversation (both directions concatenated), with the decoded meaning. */
    private static final String[][] GOLDEN = {
        {"000100010000000100000000", "WINDOW_UPDATE{flags=0x1, stream=1, length=0}", ""},
        {"000100020000000100000000", "WINDOW_UPDATE{flags=0x2, stream=1, length=0}", ""},
        {"00000000000000010000000568656c6c6f", "DATA{flags=0x0, stream=1, length=5}", "hello"},
        {"000000000000000100000005776f726c64", "DATA{flags=0x0, stream=1, length=5}", "world"},
        {"000100040000000100000000", "WINDOW_UPDATE{flags=0x4, stream=1, length=0}", ""},
        {"000200010000000000000000", "PING{flags=0x1, stream=0, length=0}", ""},
        {"000200020000000000000000", "PING{flags=0x2, stream=0, length=0}", ""},
        {"000300000000000000000000", "GO_AWAY{flags=0x0, stream=0, length=0}", ""},
        {"0001000100000001003c0000", "WINDOW_UPDATE{flags=0x1, stream=1, length=3932160}", ""},
        {"000100000000000100200000", "WINDOW_UPDATE{flags=0x0, stream=1, length=2097152}", ""},
    };

    @Test
    void wireValuesArePinned() {
        assertThat(YamuxFrames.HEADER_LENGTH).isEqualTo(12);
        assertThat(List.of(YamuxFrames.TYPE_DATA, YamuxFrames.TYPE_WINDOW_UPDATE, YamuxFrames.TYPE_PING, YamuxFrames.TYPE_GO_AWAY))
                .containsExactly(0, 1, 2, 3);
        assertThat(List.of(YamuxFrames.FLAG_SYN, YamuxFrames.FLAG_ACK, YamuxFrames.FLAG_FIN, YamuxFrames.FLAG_RST))
                .containsExactly(1, 2, 4, 8);
        assertThat(List.of(YamuxFrames.GO_AWAY_NORMAL, YamuxFrames.GO_AWAY_PROTOCOL_ERROR, YamuxFrames.GO_AWAY_INTERNAL_ERROR))
                .containsExactly(0, 1, 2);
        assertThat(YamuxFrames.INITIAL_STREAM_WINDOW).isEqualTo(262144);
    }

    @Test
    void encodesEveryGoldenHeader() {
        for (String[] g : GOLDEN) {
            byte[] wire = HEX.parseHex(g[0]);
            FrameHeader h = decodeAll(wire).get(0).header;
            ByteBuf out = Unpooled.buffer();
            FrameEncoder.writeHeader(out, h.type(), h.flags(), h.streamId(), h.length());
            out.writeBytes(g[2].getBytes(StandardCharsets.US_ASCII));
            assertThat(ByteBufUtil.hexDump(out)).as(g[1]).isEqualTo(g[0]);
        }
    }

    @Test
    void decodesEveryGoldenFrame() {
        for (String[] g : GOLDEN) {
            List<Decoded> frames = decodeAll(HEX.parseHex(g[0]));
            assertThat(frames).hasSize(1);
            assertThat(frames.get(0).header).hasToString(g[1]);
            assertThat(frames.get(0).payload).isEqualTo(g[2]);
        }
    }

    @Test
    void decodesTheWholeConversationSplitAtEveryByteBoundary() {
        StringBuilder all = new StringBuilder();
        for (String[] g : GOLDEN) {
            all.append(g[0]);
        }
        byte[] wire = HEX.parseHex(all);
        for (int cut = 0; cut <= wire.length; cut++) {
            Collector c = new Collector();
            FrameDecoder d = new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT);
            feed(d, wire, 0, cut);
            feed(d, wire, cut, wire.length);
            assertThat(c.frames).as("cut at %d", cut).hasSize(GOLDEN.length);
            for (int i = 0; i < GOLDEN.length; i++) {
                assertThat(c.frames.get(i).header).hasToString(GOLDEN[i][1]);
                assertThat(c.frames.get(i).payload).isEqualTo(GOLDEN[i][2]);
            }
        }
    }

    @Test
    void decodesOneByteAtATime() {
        byte[] wire = HEX.parseHex("00000000000000010000000568656c6c6f000100040000000100000000");
        Collector c = new Collector();
        FrameDecoder d = new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT);
        for (int i = 0; i < wire.length; i++) {
            feed(d, wire, i, i + 1);
        }
        assertThat(c.frames).extracting(f -> f.payload).containsExactly("hello", "");
    }

    @Test
    void rejectsBadVersionAndTypeAndIgnoresLaterInput() {
        for (String bad : new String[] {"010000000000000100000000", "000400000000000100000000"}) {
            Collector c = new Collector();
            FrameDecoder d = new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT);
            assertThatThrownBy(() -> d.decode(ByteBuffer.wrap(HEX.parseHex(bad))))
                    .isInstanceOf(MuxProtocolException.class)
                    .satisfies(e -> assertThat(((MuxProtocolException) e).goAwayCode()).isEqualTo(1));
            feed(d, HEX.parseHex("000200010000000000000000"), 0, 12);
            assertThat(c.frames).isEmpty();
        }
    }

    @Test
    void rejectsDataLongerThanTheGrantedWindowBeforeBuffering() {
        Collector c = new Collector();
        c.limit = 4;
        FrameDecoder d = new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT);
        assertThatThrownBy(() -> d.decode(ByteBuffer.wrap(HEX.parseHex("000000000000000100000005"))))
                .isInstanceOf(MuxProtocolException.class)
                .hasMessageContaining("receive window exceeded");
    }

    @Test
    void skipsDiscardedPayloadAcrossPieces() {
        Collector c = new Collector();
        c.limit = FrameListener.DISCARD;
        FrameDecoder d = new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT);
        byte[] wire = HEX.parseHex("00000000000000070000000568656c6c6f000200010000000000000009");
        feed(d, wire, 0, 14);
        feed(d, wire, 14, wire.length);
        assertThat(c.frames).hasSize(1);
        assertThat(c.frames.get(0).header).hasToString("PING{flags=0x1, stream=0, length=9}");
        assertThat(c.headers).hasSize(2);
    }

    private static void feed(FrameDecoder d, byte[] wire, int from, int to) {
        try {
            d.decode(ByteBuffer.wrap(wire, from, to - from));
        } catch (MuxProtocolException e) {
            throw new AssertionError(e);
        }
    }

    private static List<Decoded> decodeAll(byte[] wire) {
        Collector c = new Collector();
        feed(new FrameDecoder(c, UnpooledByteBufAllocator.DEFAULT), wire, 0, wire.length);
        return c.frames;
    }

    private record Decoded(FrameHeader header, String payload) {
    }

    private static final class Collector implements FrameListener {
        final List<Decoded> frames = new ArrayList<>();
        final List<FrameHeader> headers = new ArrayList<>();
        long limit = Long.MAX_VALUE;

        @Override
        public long onHeader(FrameHeader header) {
            headers.add(header);
            if (header.type() != YamuxFrames.TYPE_DATA) {
                frames.add(new Decoded(header, ""));
            }
            return limit;
        }

        @Override
        public void onDataPayload(FrameHeader header, ByteBuf payload) {
            frames.add(new Decoded(header, payload.toString(StandardCharsets.US_ASCII)));
            payload.release();
        }
    }
}
