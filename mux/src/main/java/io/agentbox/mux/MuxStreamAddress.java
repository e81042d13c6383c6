package io.agentbox.mux;

import java.net.SocketAddress;

/** Local address of a stream channel: the yamux stream id (unsigned 32-bit) and the local role. */
public final class MuxStreamAddress extends SocketAddress {

    private static final long serialVersionUID = 1L;
    private final MuxRole role;
    private final int streamId;

    public MuxStreamAddress(MuxRole role, int streamId) {
        this.role = role;
        this.streamId = streamId;
    }

    public MuxRole role() {
        return role;
    }

    public int streamId() {
        return streamId;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MuxStreamAddress a && a.role == role && a.streamId == streamId;
    }

    @Override
    public int hashCode() {
        return role.hashCode() * 31 + streamId;
    }

    @Override
    public String toString() {
        return "mux:" + role.name().toLowerCase() + "/" + Integer.toUnsignedString(streamId);
    }
}
