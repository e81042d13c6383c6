package io.agentbox.mux;

import io.agentbox.mux.frame.YamuxFrames;
import io.netty.buffer.ByteBuf;

/** One frame waiting in {@link SessionWriter}; {@code payload} only for Data, owned by the writer. */
record OutFrame(int type, int flags, int streamId, int length, ByteBuf payload, Runnable onWritten) {

    static OutFrame control(int type, int flags, int streamId, int length) {
        return new OutFrame(type, flags, streamId, length, null, null);
    }

    static OutFrame data(int streamId, ByteBuf payload) {
        return new OutFrame(YamuxFrames.TYPE_DATA, 0, streamId, payload.readableBytes(), payload, null);
    }

    int wireSize() {
        return YamuxFrames.HEADER_LENGTH + (payload == null ? 0 : payload.readableBytes());
    }

    void release() {
        if (payload != null) {
            payload.release();
        }
    }
}
