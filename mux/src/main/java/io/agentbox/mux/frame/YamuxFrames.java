package io.agentbox.mux.frame;

/**
 * Wire vocabulary of yamux, in the order of the spec (hashicorp/yamux {@code spec.md}, "Framing").
 *
 * <pre>
 *  0        1        2                 4                                 8                                12
 * +--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+
 * |version |  type  |      flags      |            stream id              |              length               |
 * +--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+
 * </pre>
 * All fields big-endian. Only Data frames are followed by {@code length} payload bytes.
 */
public final class YamuxFrames {

    private YamuxFrames() {
    }

    /** Header size in bytes. */
    public static final int HEADER_LENGTH = 12;
    /** The only protocol version; anything else ends the session. */
    public static final int VERSION = 0;

    /** Type 0: payload of {@code length} bytes follows. */
    public static final int TYPE_DATA = 0;
    /** Type 1: {@code length} is an additive receive-window delta for the stream. */
    public static final int TYPE_WINDOW_UPDATE = 1;
    /** Type 2: stream 0, {@code length} is an opaque value echoed back in the ACK. */
    public static final int TYPE_PING = 2;
    /** Type 3: stream 0, {@code length} is a go-away code. */
    public static final int TYPE_GO_AWAY = 3;

    /** Flag 0x1: opens a stream (or: ping request). */
    public static final int FLAG_SYN = 0x1;
    /** Flag 0x2: acknowledges a stream open (or: ping reply). */
    public static final int FLAG_ACK = 0x2;
    /** Flag 0x4: half-close; the sender sends no more data. */
    public static final int FLAG_FIN = 0x4;
    /** Flag 0x8: reset; the stream ends immediately in both directions. */
    public static final int FLAG_RST = 0x8;

    /** Go-away 0: normal; the peer opens no new streams, existing ones continue. */
    public static final int GO_AWAY_NORMAL = 0;
    /** Go-away 1: protocol error; the session ends. */
    public static final int GO_AWAY_PROTOCOL_ERROR = 1;
    /** Go-away 2: internal error; the session ends. */
    public static final int GO_AWAY_INTERNAL_ERROR = 2;

    /** Stream id of session-level frames (Ping, GoAway). */
    public static final int SESSION_STREAM_ID = 0;
    /** Window every stream starts with on both sides, in bytes (256 KiB). */
    public static final int INITIAL_STREAM_WINDOW = 256 * 1024;
    /**
     * Largest send window a peer may grant one stream, in bytes (2^32 - 1, the uint32 Go keeps it
     * in). Initial window plus all WindowUpdate deltas minus bytes sent must stay at or below it;
     * a delta that would push the window past it is a protocol error (GoAway 1).
     */
    public static final long MAX_WINDOW = 0xFFFF_FFFFL;

    /** Human-readable frame type for logs. */
    public static String typeName(int type) {
        switch (type) {
            case TYPE_DATA: return "DATA";
            case TYPE_WINDOW_UPDATE: return "WINDOW_UPDATE";
            case TYPE_PING: return "PING";
            case TYPE_GO_AWAY: return "GO_AWAY";
            default: return "TYPE(" + type + ")";
        }
    }
}
