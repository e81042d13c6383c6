package io.agentbox.mux.frame;

import io.netty.buffer.ByteBuf;

/** Receives what {@link FrameDecoder} reads, in wire order, on the decoding thread. */
public interface FrameListener {

    /**
     * A complete header. For Data frames return the most payload bytes the frame may carry
     * (the receive window granted to that stream), or {@link #DISCARD} to skip the payload
     * (unknown stream); a longer frame is a protocol error. Other types return value is ignored;
     * they are complete with this call.
     */
    long onHeader(FrameHeader header) throws MuxProtocolException;

    /** The payload of an accepted Data frame (possibly empty); ownership passes to the listener. */
    void onDataPayload(FrameHeader header, ByteBuf payload) throws MuxProtocolException;

    /** Returned by {@link #onHeader} to skip a Data frame's payload. */
    long DISCARD = -1;
}
