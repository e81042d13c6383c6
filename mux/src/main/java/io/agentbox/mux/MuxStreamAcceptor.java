package io.agentbox.mux;

import io.netty.channel.Channel;

/** Receives the streams the peer opens on a {@link MuxSession}. */
@FunctionalInterface
public interface MuxStreamAcceptor {

    /**
     * Called once for every stream the peer opened, with the stream's Netty channel (already
     * registered on an event loop and active). Called from the channel's event loop; must not
     * block. Add handlers here: no data is delivered before this returns. The ACK is sent when it
     * returns with the channel open (as Go ACKs on Accept); closing or
     * {@link MuxStreamChannel#reset()} the channel inside refuses the stream (RST), and so does
     * throwing.
     */
    void accept(MuxSession session, Channel stream);

    /** An acceptor that refuses every stream with RST. */
    static MuxStreamAcceptor refuseAll() {
        return (session, stream) -> ((MuxStreamChannel) stream).reset();
    }
}
