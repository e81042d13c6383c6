package io.agentbox.mux;

import io.netty.buffer.ByteBuf;

/**
 * The byte pipe under a {@link MuxSession} (a WebSocket, a TCP socket, an in-memory pair). It is a
 * byte stream: message boundaries mean nothing to yamux. Inbound bytes are pushed into
 * {@link MuxSession#receive(java.nio.ByteBuffer)}; the end of input is reported with
 * {@link MuxSession#transportClosed(Throwable)}.
 */
public interface MuxTransport {

    /**
     * Sends {@code bytes} (ownership passes to the transport, which releases it). The session has
     * at most one write outstanding; {@code done} must be called exactly once, with {@code null}
     * on success or the failure, from any thread (possibly inline). Must not block.
     */
    void write(ByteBuf bytes, WriteCallback done);

    /** Closes the pipe; idempotent. Must eventually lead to {@link MuxSession#transportClosed}. */
    void close();

    /**
     * A transport with no peer: writes are dropped (and completed), close does nothing. For a
     * session that must exist without a connection, e.g. a cluster registered in a routing or sync
     * test. Its streams never get an ACK.
     */
    static MuxTransport discarding() {
        return new MuxTransport() {
            @Override
            public void write(ByteBuf bytes, WriteCallback done) {
                bytes.release();
                done.completed(null);
            }

            @Override
            public void close() {
            }
        };
    }

    /** Completion of one {@link #write}. */
    @FunctionalInterface
    interface WriteCallback {
        void completed(Throwable failure);
    }
}
