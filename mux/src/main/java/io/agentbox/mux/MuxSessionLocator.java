package io.agentbox.mux;

/**
 * Something a {@link MuxStreamChannel} can connect to: the session on which {@code connect} opens
 * a new stream. Implemented by {@code io.agentbox.mux.grpc.MuxAddress}.
 */
public interface MuxSessionLocator {

    /** The session to open the next stream on; {@code null} or a closed session means "offline". */
    MuxSession currentSession();
}
