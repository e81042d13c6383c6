package io.agentbox.mux.frame;

/**
 * The peer broke the yamux protocol; the session answers with GoAway({@code goAwayCode}) and ends.
 */
public final class MuxProtocolException extends Exception {

    private final int goAwayCode;

    private MuxProtocolException(int goAwayCode, String message) {
        super(message, null, false, false);
        this.goAwayCode = goAwayCode;
    }

    /** A session-level protocol error (GoAway code 1). */
    public static MuxProtocolException protocolError(String format, Object... args) {
        return new MuxProtocolException(YamuxFrames.GO_AWAY_PROTOCOL_ERROR, String.format(format, args));
    }

    /** The go-away code to send before closing. */
    public int goAwayCode() {
        return goAwayCode;
    }
}
