package io.agentbox.mux.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;

/**
 * Turns a byte stream into yamux frames. Input boundaries are irrelevant: a frame may arrive in
 * many pieces and one piece may hold many frames. The header is checked (version 0, type 0..3)
 * and the Data length is checked against the listener's limit <em>before</em> any payload is
 * buffered, so memory per frame is bounded by the window we granted. After the first error all
 * further input is ignored. Not thread-safe: one reader thread.
 */
public final class FrameDecoder {

    private final FrameListener listener;
    private final ByteBufAllocator alloc;
    private final byte[] header = new byte[YamuxFrames.HEADER_LENGTH];
    private int headerFill;
    private FrameHeader current;
    private ByteBuf payload;
    private long skipRemaining;
    private boolean failed;

    public FrameDecoder(FrameListener listener, ByteBufAllocator alloc) {
        this.listener = listener;
        this.alloc = alloc;
    }

    /** Consumes all of {@code in}. Throws on the first protocol error (then ignores later input). */
    public void decode(ByteBuffer in) throws MuxProtocolException {
        if (failed) {
            in.position(in.limit());
            return;
        }
        try {
            while (!failed && in.hasRemaining()) {
                if (skipRemaining > 0) {
                    int n = (int) Math.min(skipRemaining, in.remaining());
                    in.position(in.position() + n);
                    skipRemaining -= n;
                } else if (payload != null) {
                    int n = Math.min(payload.writableBytes(), in.remaining());
                    int oldLimit = in.limit();
                    in.limit(in.position() + n);
                    payload.writeBytes(in);
                    in.limit(oldLimit);
                    if (!payload.isWritable()) {
                        deliverPayload();
                    }
                } else {
                    int n = Math.min(header.length - headerFill, in.remaining());
                    in.get(header, headerFill, n);
                    headerFill += n;
                    if (headerFill == header.length) {
                        headerFill = 0;
                        onHeader(parse(header));
                    }
                }
            }
            if (failed) {
                in.position(in.limit());
            }
        } catch (MuxProtocolException | RuntimeException e) {
            failed = true;
            in.position(in.limit());
            release();
            throw e;
        }
    }

    /** Convenience for Netty buffers; consumes all readable bytes. */
    public void decode(ByteBuf in) throws MuxProtocolException {
        for (ByteBuffer b : in.nioBuffers()) {
            decode(b);
        }
        in.skipBytes(in.readableBytes());
    }

    /** Frees a partially read payload; further input is ignored. */
    public void release() {
        failed = true;
        if (payload != null) {
            payload.release();
            payload = null;
        }
    }

    static FrameHeader parse(byte[] h) throws MuxProtocolException {
        int version = h[0] & 0xFF;
        int type = h[1] & 0xFF;
        if (version != YamuxFrames.VERSION) {
            throw MuxProtocolException.protocolError("invalid yamux version %d", version);
        }
        if (type > YamuxFrames.TYPE_GO_AWAY) {
            throw MuxProtocolException.protocolError("invalid yamux frame type %d", type);
        }
        int flags = ((h[2] & 0xFF) << 8) | (h[3] & 0xFF);
        return new FrameHeader(version, type, flags, readInt(h, 4), readInt(h, 8));
    }

    private static int readInt(byte[] b, int off) {
        return ((b[off] & 0xFF) << 24) | ((b[off + 1] & 0xFF) << 16) | ((b[off + 2] & 0xFF) << 8) | (b[off + 3] & 0xFF);
    }

    private void onHeader(FrameHeader h) throws MuxProtocolException {
        long limit = listener.onHeader(h);
        if (h.type() != YamuxFrames.TYPE_DATA) {
            return;
        }
        long length = h.lengthAsLong();
        if (limit == FrameListener.DISCARD) {
            skipRemaining = length;
            return;
        }
        if (length > limit) {
            throw MuxProtocolException.protocolError(
                    "receive window exceeded on stream %d: frame %d > window %d",
                    Integer.toUnsignedLong(h.streamId()), length, limit);
        }
        current = h;
        payload = alloc.buffer((int) length, (int) length);
        if (length == 0) {
            deliverPayload();
        }
    }

    private void deliverPayload() throws MuxProtocolException {
        ByteBuf p = payload;
        FrameHeader h = current;
        payload = null;
        current = null;
        listener.onDataPayload(h, p);
    }
}
