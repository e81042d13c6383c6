package io.agentbox.mux;

import io.netty.channel.Channel;

/** Receives the streams the peer opens on a {@link MuxSession}. */
@FunctionalInterface
public interface MuxStreamAcceptor {

    /**
     * Called once for every stream the peer opened, with the stream's Netty channel (already
     * registered on an event loop, active, ACK already sent). Called from the channel's event loop;
     * must not block. Closing the channel ends the stream (FIN), {@link MuxStreamChannel#reset()}
     * refuses it (RST). If this method throws, the stream is reset.
     */
    void accept(MuxSession session, Channel stream);

    /** An acceptor that refuses every stream with RST. */
    static MuxStreamAcceptor refuseAll() {
        return (session, stream) -> ((MuxStreamChannel) stream).reset();
    }
}
