package io.agentbox.mux;

/**
 * The protocol state of one yamux stream: where it is in its life (yamux {@code spec.md} "Stream
 * Open", "Stream Close") and its two flow-control windows ("Flow Control"). Its
 * {@link MuxStreamChannel} keeps everything Netty (pipeline, outbound buffer, delivery, timers).
 *
 * <p><b>Ownership.</b> Only {@link MuxSession} changes it, in its frame handlers: the reader for
 * frames from the peer (FIN, RST, ACK, Data, WindowUpdate), and the send methods the channel calls
 * on its event loop for our own frames (FIN, RST, ACK, Data, WindowUpdate). Those are two threads
 * whenever the channel's loop is not the socket's (Jetty sessions, gRPC's channels), so every
 * field is guarded by this object's lock; the channel only reads. A transition method returns
 * whether it changed anything, so each frame and each slot release happens once.
 */
final class MuxStream {

    /** Which directions still carry data. Changes only forward; CLOSED and RESET are final. */
    enum State {
        /** Both directions open. */
        OPEN,
        /** We sent FIN; the peer may still send. */
        LOCAL_CLOSED,
        /** The peer sent FIN; we may still send. */
        REMOTE_CLOSED,
        /** Both FINs sent. */
        CLOSED,
        /** RST sent or received, or the session ended: nothing more either way. */
        RESET
    }

    /** The SYN/ACK exchange, apart from {@link State}: a peer may FIN before we ACK. */
    enum Handshake {
        /** Our SYN is out, the peer's ACK not yet in; the open counts toward {@code maxPendingOpens}. */
        SYN_SENT,
        /** The peer's SYN is in, our ACK not yet out (sent once the stream was accepted). */
        SYN_RECEIVED,
        /** ACKed, refused or abandoned. */
        DONE
    }

    private final int id;
    // guarded by this
    private State state = State.OPEN;
    private Handshake handshake;
    /** Bytes we may still send: the peer's grants less what we sent. */
    private long sendWindow;
    /** Bytes the peer may still send: our grants less what arrived. */
    private long receiveWindow;

    MuxStream(int id, Handshake handshake, long sendWindow, long receiveWindow) {
        this.id = id;
        this.handshake = handshake;
        this.sendWindow = sendWindow;
        this.receiveWindow = receiveWindow;
    }

    /** The yamux stream id (unsigned). */
    int id() {
        return id;
    }

    synchronized State state() {
        return state;
    }

    /** True once our FIN went out (and no RST since). */
    synchronized boolean localFinSent() {
        return state == State.LOCAL_CLOSED || state == State.CLOSED;
    }

    /** True while the peer may still send Data: neither its FIN nor any RST seen. */
    synchronized boolean peerMaySend() {
        return state == State.OPEN || state == State.LOCAL_CLOSED;
    }

    synchronized boolean isReset() {
        return state == State.RESET;
    }

    /** True once the session can forget the stream: both FINs exchanged, or reset. */
    synchronized boolean isFinished() {
        return state == State.CLOSED || state == State.RESET;
    }

    synchronized long sendWindow() {
        return sendWindow;
    }

    synchronized long receiveWindow() {
        return receiveWindow;
    }

    // ---- transitions, called by MuxSession only ------------------------------------------------

    /** Our FIN is queued. */
    synchronized void finSent() {
        if (state == State.OPEN) {
            state = State.LOCAL_CLOSED;
        } else if (state == State.REMOTE_CLOSED) {
            state = State.CLOSED;
        }
    }

    /** The peer's FIN arrived; false if it was already seen or the stream is reset. */
    synchronized boolean finReceived() {
        if (state == State.OPEN) {
            state = State.REMOTE_CLOSED;
            return true;
        }
        if (state == State.LOCAL_CLOSED) {
            state = State.CLOSED;
            return true;
        }
        return false;
    }

    /** An RST was sent or received, or the session ended; false if it already was reset. */
    synchronized boolean reset() {
        if (state == State.RESET) {
            return false;
        }
        state = State.RESET;
        return true;
    }

    /** Leaves SYN_SENT (ACK, RST, or given up); true once, when the pending open is to be released. */
    synchronized boolean leaveSynSent() {
        if (handshake != Handshake.SYN_SENT) {
            return false;
        }
        handshake = Handshake.DONE;
        return true;
    }

    /** Leaves SYN_RECEIVED; true once, when our ACK (or instead an RST) is still to be sent. */
    synchronized boolean leaveSynReceived() {
        if (handshake != Handshake.SYN_RECEIVED) {
            return false;
        }
        handshake = Handshake.DONE;
        return true;
    }

    /** The peer granted {@code delta} more bytes; returns the new send window (may exceed 2^32-1). */
    synchronized long granted(long delta) {
        sendWindow += delta;
        return sendWindow;
    }

    /** We are sending {@code bytes} of Data (at most {@link #sendWindow()}). */
    synchronized void sent(long bytes) {
        sendWindow -= bytes;
    }

    /** We granted the peer {@code delta} more bytes (before the WindowUpdate leaves). */
    synchronized void grant(long delta) {
        receiveWindow += delta;
    }

    /** {@code bytes} of Data arrived from the peer (within {@link #receiveWindow()}). */
    synchronized void received(long bytes) {
        receiveWindow -= bytes;
    }

    @Override
    public synchronized String toString() {
        return "stream " + Integer.toUnsignedString(id) + " " + state + "/" + handshake
                + " send window " + sendWindow + ", receive window " + receiveWindow;
    }
}
