package io.agentbox.mux;

import java.net.SocketAddress;

/**
 * Address of a stream channel: the yamux stream id (unsigned 32-bit) and a role. As the remote
 * address of a stream the peer opened it also names the {@link #session()} it arrived on, so a
 * server that sees only addresses (gRPC's {@code TRANSPORT_ATTR_REMOTE_ADDR}) can tell which
 * authenticated tunnel a call came over. The session is not part of equality.
 */
public final class MuxStreamAddress extends SocketAddress {

    private static final long serialVersionUID = 1L;
    private final MuxRole role;
    private final int streamId;
    private final transient MuxSession session;

    public MuxStreamAddress(MuxRole role, int streamId) {
        this(role, streamId, null);
    }

    /** @param session the session carrying the stream; null when unknown */
    public MuxStreamAddress(MuxRole role, int streamId, MuxSession session) {
        this.role = role;
        this.streamId = streamId;
        this.session = session;
    }

    /** The session the stream belongs to, or null (e.g. after deserialization). */
    public MuxSession session() {
        return session;
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
