package io.agentbox.mux;

import java.net.SocketAddress;

/** Connect target that always means "this session"; used by {@link MuxSession#openStream()}. */
final class SessionAddress extends SocketAddress implements MuxSessionLocator {

    private static final long serialVersionUID = 1L;
    private final transient MuxSession session;

    SessionAddress(MuxSession session) {
        this.session = session;
    }

    @Override
    public MuxSession currentSession() {
        return session;
    }

    @Override
    public String toString() {
        return "mux-session:" + session.role();
    }
}
