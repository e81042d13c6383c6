package io.agentbox.mux.frame;

/**
 * One decoded 12-byte yamux header. {@code streamId} and {@code length} are unsigned 32-bit on the
 * wire; they are kept as Java ints (use {@link #lengthAsLong()} for the unsigned value).
 */
public record FrameHeader(int version, int type, int flags, int streamId, int length) {

    public static FrameHeader of(int type, int flags, int streamId, int length) {
        return new FrameHeader(YamuxFrames.VERSION, type, flags, streamId, length);
    }

    public boolean hasFlag(int flag) {
        return (flags & flag) != 0;
    }

    public long lengthAsLong() {
        return Integer.toUnsignedLong(length);
    }

    @Override
    public String toString() {
        return YamuxFrames.typeName(type) + "{flags=0x" + Integer.toHexString(flags)
                + ", stream=" + Integer.toUnsignedString(streamId) + ", length=" + lengthAsLong() + "}";
    }
}
