package io.agentbox.mux.frame;

import io.netty.buffer.ByteBuf;

/** Writes yamux headers (yamux spec, "Framing"); stateless. */
public final class FrameEncoder {

    private FrameEncoder() {
    }

    /** Appends the 12-byte big-endian header to {@code out}. */
    public static void writeHeader(ByteBuf out, int type, int flags, int streamId, int length) {
        out.writeByte(YamuxFrames.VERSION);
        out.writeByte(type);
        out.writeShort(flags);
        out.writeInt(streamId);
        out.writeInt(length);
    }

    public static void writeHeader(ByteBuf out, FrameHeader h) {
        writeHeader(out, h.type(), h.flags(), h.streamId(), h.length());
    }
}
