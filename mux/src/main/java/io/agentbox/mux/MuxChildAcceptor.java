package io.agentbox.mux;

import io.netty.channel.Channel;

/**
 * An acceptor that registers accepted stream channels itself, e.g. a Netty server channel whose
 * {@code ServerBootstrap} registers children on its own worker group. The session calls
 * {@link #acceptUnregistered} instead of {@link #accept}. Until the channel is registered, frames
 * for it are held in a small mailbox bounded by the stream's receive window.
 */
public interface MuxChildAcceptor extends MuxStreamAcceptor {

    /**
     * Receives a not-yet-registered stream channel; must register it (or close it) promptly and
     * without blocking. Called on the session reader's thread.
     */
    void acceptUnregistered(MuxSession session, Channel stream);

    @Override
    default void accept(MuxSession session, Channel stream) {
        throw new UnsupportedOperationException("MuxChildAcceptor receives unregistered channels");
    }
}
