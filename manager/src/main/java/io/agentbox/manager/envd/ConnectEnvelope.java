package io.agentbox.manager.envd;

import io.agentbox.manager.http.ApiException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Connect streaming envelopes (docs/e2b-wire.md#streams-and-envelopes): {@code flags:uint8, length:uint32 BE,
 * payload[length]}. Flag {@code 0x00} = message, {@code 0x02} = end-of-stream; the compressed
 * flag {@code 0x01} is never produced and rejected on input.
 */
public final class ConnectEnvelope {
    public static final int FLAG_MESSAGE = 0x00;
    public static final int FLAG_COMPRESSED = 0x01;
    public static final int FLAG_END_STREAM = 0x02;
    public static final int HEADER_LENGTH = 5;

    private ConnectEnvelope() {}

    /** One envelope holding {@code payload}, ready to write. */
    public static ByteBuffer frame(int flags, byte[] payload) {
        ByteBuffer buf = ByteBuffer.allocate(HEADER_LENGTH + payload.length);
        buf.put((byte) flags).putInt(payload.length).put(payload).flip();
        return buf;
    }

    /**
     * The payload of a request body that must hold exactly one uncompressed message envelope (the
     * request of a server-streaming call).
     *
     * @throws ApiException 400 with Connect code {@code invalid_argument} when the body is not one envelope
     */
    public static byte[] singleMessage(byte[] body) {
        if (body.length < HEADER_LENGTH) {
            throw ConnectError.of(ConnectError.INVALID_ARGUMENT, "request body is not a Connect envelope").toException();
        }
        int flags = body[0] & 0xff;
        long length = ByteBuffer.wrap(body, 1, 4).getInt() & 0xffffffffL;
        if ((flags & FLAG_COMPRESSED) != 0) {
            throw ConnectError.of(ConnectError.INVALID_ARGUMENT, "compressed envelopes are not supported").toException();
        }
        if (flags != FLAG_MESSAGE || length != body.length - HEADER_LENGTH) {
            throw ConnectError.of(ConnectError.INVALID_ARGUMENT,
                    "request body must be exactly one message envelope").toException();
        }
        return Arrays.copyOfRange(body, HEADER_LENGTH, body.length);
    }
}
