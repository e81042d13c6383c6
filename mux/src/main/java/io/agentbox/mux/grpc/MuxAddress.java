package io.agentbox.mux.grpc;

import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxSessionLocator;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A gRPC target or bind address inside the mux world, identified by {@link #name()}.
 * As a client target, every connect opens a new stream on the session the supplier returns at
 * that moment; a {@code null} or closed session makes connect fail fast with
 * {@link java.net.ConnectException}, so gRPC reports UNAVAILABLE and retries with back-off, and
 * the same {@code ManagedChannel} works again once a new session appears. As a server address
 * the name keys the {@link MuxServerChannel} registry; the supplier is not used.
 */
public final class MuxAddress extends SocketAddress implements MuxSessionLocator {

    private static final long serialVersionUID = 1L;
    private final String name;
    private final transient Supplier<MuxSession> currentSession;

    public MuxAddress(String name, Supplier<MuxSession> currentSession) {
        this.name = Objects.requireNonNull(name, "name");
        this.currentSession = currentSession == null ? () -> null : currentSession;
    }

    /** A server-side address (no session supplier needed). */
    public static MuxAddress named(String name) {
        return new MuxAddress(name, null);
    }

    public String name() {
        return name;
    }

    @Override
    public MuxSession currentSession() {
        MuxSession s = currentSession.get();
        return s != null && s.isOpen() && !s.isRemoteGoAway() ? s : null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MuxAddress a && a.name.equals(name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return "mux:" + name;
    }
}
