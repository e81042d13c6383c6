package io.agentbox.mux.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** RFC 6455 §5.2/§5.3 by hand: header layouts and masking against a byte-by-byte reference. */
class MaskedFramesTest {

    private static byte[] reference(byte[] data, int key) {
        byte[] k = {(byte) (key >>> 24), (byte) (key >>> 16), (byte) (key >>> 8), (byte) key};
        byte[] out = new byte[data.length];
        for (int i = 0; i < data.length; i++) {
            out[i] = (byte) (data[i] ^ k[i % 4]);
        }
        return out;
    }

    @Test
    void masksLikeTheReferenceForEveryLengthAndOffsetAndUnmasksBack() {
        Random rnd = new Random(7);
        for (int len : new int[] {0, 1, 3, 7, 8, 9, 15, 16, 17, 125, 126, 1000, 65536, 70001}) {
            byte[] data = new byte[len];
            rnd.nextBytes(data);
            int key = rnd.nextInt();
            for (ByteBuf buf : new ByteBuf[] {Unpooled.directBuffer(len + 5), Unpooled.buffer(len + 5)}) {
                buf.writeBytes(new byte[5]).readerIndex(5); // a payload that does not start at index 0
                buf.writeBytes(data);
                MaskedFrames.mask(buf, key);
                assertThat(ByteBufUtil.getBytes(buf)).as("length %d", len).isEqualTo(reference(data, key));
                MaskedFrames.mask(buf, key);
                assertThat(ByteBufUtil.getBytes(buf)).isEqualTo(data);
                buf.release();
            }
        }
    }

    @Test
    void aPayloadInSeveralComponentsIsMaskedAcrossTheirBoundaries() {
        byte[] data = new byte[37];
        new Random(3).nextBytes(data);
        CompositeByteBuf c = Unpooled.compositeBuffer();
        c.addComponent(true, Unpooled.copiedBuffer(data, 0, 10));
        c.addComponent(true, Unpooled.copiedBuffer(data, 10, 27));
        MaskedFrames.mask(c, 0x01020304);
        assertThat(ByteBufUtil.getBytes(c)).isEqualTo(reference(data, 0x01020304));
        c.release();
    }

    @Test
    void headersUseTheShortestLengthEncodingAndCarryTheMaskBitAndKey() {
        ByteBufAllocator a = ByteBufAllocator.DEFAULT;
        ByteBuf h = MaskedFrames.header(a, 125, 0xAABBCCDD);
        assertThat(ByteBufUtil.hexDump(h)).isEqualTo("82fd" + "aabbccdd");
        h.release();
        h = MaskedFrames.header(a, 126, 1);
        assertThat(ByteBufUtil.hexDump(h)).isEqualTo("82fe007e" + "00000001");
        h.release();
        h = MaskedFrames.header(a, 65535, 1);
        assertThat(ByteBufUtil.hexDump(h)).isEqualTo("82feffff" + "00000001");
        h.release();
        h = MaskedFrames.header(a, 65536, 1);
        assertThat(ByteBufUtil.hexDump(h)).isEqualTo("82ff0000000000010000" + "00000001");
        h.release();
    }
}
