package io.agentbox.manager.nativeapi;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Decodes a byte stream that arrives in chunks as UTF-8 text: a character split across two chunks
 * is decoded whole (its first bytes wait for the next chunk); bytes that are not UTF-8 become
 * U+FFFD. Not thread-safe: one per stream.
 */
final class Utf8Chunks {
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE);
    private byte[] carry = new byte[0];

    /** The text of {@code chunk} (with the bytes carried from the last one), minus an incomplete last character. */
    String decode(byte[] chunk) {
        ByteBuffer in = ByteBuffer.allocate(carry.length + chunk.length).put(carry).put(chunk).flip();
        CharBuffer out = CharBuffer.allocate(in.remaining() + 1);
        decoder.decode(in, out, false);
        carry = new byte[in.remaining()];
        in.get(carry);
        return out.flip().toString();
    }
}
