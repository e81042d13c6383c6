package io.agentbox.mux;

/**
 * Which half of the yamux stream-id space a session allocates from (yamux spec, "Stream
 * Identification"). The roles are fixed by configuration, never inferred: the two ends of one
 * session must hold different roles or their ids collide.
 */
public enum MuxRole {
    /** Opens streams with odd ids 1, 3, 5, ... The worker (WebSocket dialer) is the client. */
    CLIENT,
    /** Opens streams with even ids 2, 4, 6, ... The hub/manager is the server. */
    SERVER;

    /** First id this role allocates. */
    int firstStreamId() {
        return this == CLIENT ? 1 : 2;
    }

    /** True if {@code streamId} belongs to the id space of this role. */
    boolean owns(int streamId) {
        return (streamId & 1) == (this == CLIENT ? 1 : 0);
    }
}
