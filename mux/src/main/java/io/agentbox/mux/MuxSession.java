package io.agentbox.mux;

import static io.agentbox.mux.frame.YamuxFrames.FLAG_ACK;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_FIN;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_RST;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_SYN;
import static io.agentbox.mux.frame.YamuxFrames.GO_AWAY_INTERNAL_ERROR;
import static io.agentbox.mux.frame.YamuxFrames.GO_AWAY_NORMAL;
import static io.agentbox.mux.frame.YamuxFrames.INITIAL_STREAM_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.MAX_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.SESSION_STREAM_ID;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_DATA;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_GO_AWAY;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_PING;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_WINDOW_UPDATE;

import io.agentbox.mux.frame.FrameDecoder;
import io.agentbox.mux.frame.FrameHeader;
import io.agentbox.mux.frame.FrameListener;
import io.agentbox.mux.frame.MuxProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One yamux session (hashicorp/yamux {@code spec.md}) over a {@link MuxTransport}. Every stream is
 * a Netty {@link MuxStreamChannel}; streams the peer opens go to the {@link MuxStreamAcceptor}.
 *
 * <p><b>Reading.</b> The transport adapter pushes bytes into {@link #receive(ByteBuffer)} from one
 * thread at a time. The reader never blocks: it decodes frames, hands them to the stream's event
 * loop and returns. Memory per stream is bounded by the receive window we granted, because window
 * updates are sent only when the stream's consumer has taken bytes (consumption-based flow
 * control, spec "Flow Control").
 *
 * <p><b>Writing.</b> A single writer coalesces frames into transport writes, control frames (ACK,
 * window update, ping reply, RST, go-away) ahead of data so that a data backlog never delays a
 * ping reply past the peer's keepalive deadline.
 *
 * <p><b>Streams.</b> Each stream's protocol state is a {@link MuxStream} that only this class
 * changes, in its frame handlers; the stream's channel holds the Netty side and hears of changes
 * through events on its loop.
 *
 * <p><b>Life.</b> One state that only moves forward: OPEN, DRAINING, CLOSING, ENDED.
 * {@link #goAway()} (DRAINING) sends GoAway(0) without ending the session: new streams from the
 * peer are refused, existing streams and our own opens go on (as in Go). {@link #close()}
 * (CLOSING) sends GoAway(0) and closes the transport; so do a protocol error (GoAway(1)) and a
 * keepalive timeout. The session ENDs when the transport reports closure, on a peer GoAway with a
 * non-zero code, or when the final GoAway was written; then every stream channel closes and
 * {@link #closeFuture()} completes. The peer's GoAway(0) is kept apart ({@link #isRemoteGoAway()}).
 */
public final class MuxSession {

    private static final Logger log = LoggerFactory.getLogger(MuxSession.class);
    private static final int MAX_OUTSTANDING_PINGS = 64;

    /** Our side's life; it only moves forward (the peer's GoAway(0) is {@code remoteGoAway}). */
    private enum State {
        /** Streams open both ways. */
        OPEN,
        /** {@link #goAway()} sent GoAway(0): new inbound streams are refused, the rest goes on. */
        DRAINING,
        /** {@link #close()}, a protocol error or a dead peer: the final GoAway is queued, the transport closing. */
        CLOSING,
        /** The transport is closed; every stream has ended. */
        ENDED
    }

    private final MuxRole role;
    private final MuxConfig config;
    private final MuxTransport transport;
    private final MuxStreamAcceptor acceptor;
    private final EventLoopGroup group;
    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final SessionWriter writer;
    private final FrameDecoder decoder;
    private final Map<Integer, MuxStreamChannel> streams = new ConcurrentHashMap<>();
    private final AtomicLong nextStreamId;
    private final AtomicInteger pendingAccepts = new AtomicInteger();
    private final AtomicInteger pendingOpens = new AtomicInteger();
    private final Map<Integer, PendingPing> pings = new ConcurrentHashMap<>();
    private final AtomicInteger nextPingId = new AtomicInteger();
    private final AtomicReference<State> state = new AtomicReference<>(State.OPEN);
    private final CompletableFuture<Void> closeFuture = new CompletableFuture<>();
    private volatile boolean remoteGoAway;
    private volatile ScheduledFuture<?> keepAlive;
    /** Inbound Data bytes held (see {@link MuxConfig#maxSessionReceiveBuffer()}). */
    private final AtomicLong bufferedInbound = new AtomicLong();
    /** Bytes reserved for the Data payload the decoder is reading now; guarded by {@code decoder}. */
    private long reservedInFlight;
    /** Ping ACKs queued but not yet written (see {@link MuxConfig#maxPendingPingReplies()}). */
    private final AtomicInteger pendingPingReplies = new AtomicInteger();
    /** {@link System#nanoTime()} when the last byte arrived from the peer (or the session started). */
    private volatile long lastInboundNanos = System.nanoTime();
    /** When our last keepalive ping was sent; guarded by the keepalive timer. */
    private long lastKeepAlivePingNanos;
    /** Bytes the transport delivered to {@link #receive}; written by the one reading thread. */
    private final AtomicLong receivedBytes = new AtomicLong();
    /** Round trip of the last answered ping (ours, keepalive or {@link #ping()}), ns; -1 before the first. */
    private volatile long lastRoundTripNanos = -1;

    private MuxSession(MuxRole role, MuxConfig config, MuxTransport transport, MuxStreamAcceptor acceptor) {
        this.role = Objects.requireNonNull(role, "role");
        this.config = Objects.requireNonNull(config, "config");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.acceptor = acceptor == null ? MuxStreamAcceptor.refuseAll() : acceptor;
        this.group = config.eventLoopGroup() != null ? config.eventLoopGroup() : MuxEventLoops.shared();
        this.nextStreamId = new AtomicLong(role.firstStreamId());
        this.writer = new SessionWriter(transport, alloc, config, this::onTransportFailure);
        this.decoder = new FrameDecoder(new Reader(), alloc);
    }

    /**
     * Starts a session over {@code transport}. The adapter must then feed inbound bytes to
     * {@link #receive(ByteBuffer)} and report the end with {@link #transportClosed(Throwable)}.
     *
     * @param acceptor receives peer-opened streams; {@code null} refuses them all with RST
     */
    public static MuxSession start(MuxRole role, MuxConfig config, MuxTransport transport, MuxStreamAcceptor acceptor) {
        MuxSession s = new MuxSession(role, config, transport, acceptor);
        s.startKeepAlive();
        return s;
    }

    public MuxRole role() {
        return role;
    }

    public MuxConfig config() {
        return config;
    }

    /** True until the session ends or {@link #close()} is called. */
    public boolean isOpen() {
        State st = state.get();
        return st == State.OPEN || st == State.DRAINING;
    }

    /** True once the peer sent GoAway(0): {@link #openStream()} then fails, existing streams go on. */
    public boolean isRemoteGoAway() {
        return remoteGoAway;
    }

    /** Streams currently known to the session (open, half-closed, or waiting for the peer's FIN). */
    public int streamCount() {
        return streams.size();
    }

    /**
     * Bytes the transport delivered to this session so far (frame headers included; a counter for
     * metrics, never reset while the session lives).
     */
    public long bytesReceived() {
        return receivedBytes.get();
    }

    /** Bytes this session handed to its transport so far (frame headers included; a counter for metrics). */
    public long bytesSent() {
        return writer.bytesWritten();
    }

    /**
     * Round-trip time of the last ping of ours the peer answered (a keepalive ping or
     * {@link #ping()}), or null before the first answer.
     */
    public Duration lastRoundTrip() {
        long ns = lastRoundTripNanos;
        return ns < 0 ? null : Duration.ofNanos(ns);
    }

    /**
     * Bytes of peer Data the session holds now: accepted from the transport (including a frame
     * still being read) but not yet delivered to a stream's consumer nor dropped. Never exceeds
     * {@link MuxConfig#maxSessionReceiveBuffer()}; returns to 0 once every stream has ended.
     */
    public long bufferedInboundBytes() {
        return bufferedInbound.get();
    }

    /** Completes (never exceptionally) when the session has ended for any reason. */
    public CompletableFuture<Void> closeFuture() {
        return closeFuture;
    }

    /**
     * Opens a stream (WindowUpdate+SYN carrying our window surplus, as Go does) and completes with
     * its channel, registered and active, once the peer's ACK arrived. Fails fast with a
     * {@link ConnectException} if the session is closed, the peer sent GoAway, too many opens
     * await their ACK ({@link MuxConfig#maxPendingOpens()}), or the peer refuses the stream (RST).
     */
    public CompletableFuture<Channel> openStream() {
        CompletableFuture<Channel> result = new CompletableFuture<>();
        IOException refusal = openRefusal();
        if (refusal != null) {
            result.completeExceptionally(refusal);
            return result;
        }
        MuxStreamChannel ch = new MuxStreamChannel();
        group.next().register(ch).addListener(reg -> {
            if (!reg.isSuccess()) {
                result.completeExceptionally(reg.cause());
                return;
            }
            ch.connect(new SessionAddress(this)).addListener(con -> {
                if (con.isSuccess()) {
                    result.complete(ch);
                } else {
                    result.completeExceptionally(con.cause());
                }
            });
        });
        return result;
    }

    /** Sends a Ping SYN; completes with the round-trip time, or exceptionally if the session ends. */
    public CompletableFuture<Duration> ping() {
        CompletableFuture<Duration> result = new CompletableFuture<>();
        if (!isOpen()) {
            result.completeExceptionally(new ClosedChannelException());
            return result;
        }
        if (pings.size() >= MAX_OUTSTANDING_PINGS) {
            result.completeExceptionally(new IllegalStateException("too many outstanding pings"));
            return result;
        }
        int id = nextPingId.getAndIncrement();
        pings.put(id, new PendingPing(System.nanoTime(), result));
        if (!control(TYPE_PING, FLAG_SYN, SESSION_STREAM_ID, id)) {
            pings.remove(id);
            result.completeExceptionally(new ClosedChannelException());
        }
        return result;
    }

    /**
     * Tells the peer we will accept no new streams: sends one GoAway frame with code 0 ("normal
     * termination", yamux {@code spec.md} "Go Away" / type 0x3; on the wire
     * {@code 00 03 0000 00000000 00000000}) through the control lane, ahead of queued data,
     * <em>without</em> closing the session or the transport. Afterwards:
     * <ul>
     *   <li>every new inbound SYN is refused with RST (a WindowUpdate with flag RST, length 0), as
     *       Go's {@code GoAway()} does; a peer like Go sees its own opens fail with
     *       {@code ErrRemoteGoAway} once it has read the frame;</li>
     *   <li>existing streams, in both directions, continue (data, window updates, FIN, RST);</li>
     *   <li>our own {@link #openStream()} still works (the spec forbids nothing here, and Go allows
     *       it); {@link #isOpen()} stays true;</li>
     *   <li>{@link #close()} still works and ends the session, sending its own final GoAway(0).</li>
     * </ul>
     * Idempotent: only the first call sends a frame. A no-op once the session is closing or ended.
     * Not reversible.
     */
    public void goAway() {
        if (!state.compareAndSet(State.OPEN, State.DRAINING)) {
            return;
        }
        log.debug("mux {} sending GoAway(0); refusing new inbound streams", role);
        control(TYPE_GO_AWAY, 0, SESSION_STREAM_ID, GO_AWAY_NORMAL);
    }

    /**
     * True once we told the peer GoAway, by {@link #goAway()} or by closing: new inbound streams
     * are refused with RST.
     */
    public boolean isLocalGoAway() {
        return state.get() != State.OPEN;
    }

    /** Sends GoAway(0), then closes the transport; idempotent. Streams end with the session. */
    public void close() {
        if (advance(State.CLOSING).compareTo(State.CLOSING) >= 0) {
            return;
        }
        goAwayAndClose(GO_AWAY_NORMAL);
    }

    /**
     * Feeds transport bytes; called by the transport adapter from one thread at a time. Consumes
     * all of {@code bytes} and returns without blocking.
     */
    public void receive(ByteBuffer bytes) {
        if (bytes.hasRemaining()) {
            lastInboundNanos = System.nanoTime();
            receivedBytes.addAndGet(bytes.remaining());
        }
        if (state.get() == State.ENDED) {
            bytes.position(bytes.limit());
            return;
        }
        try {
            synchronized (decoder) {
                decoder.decode(bytes);
            }
        } catch (MuxProtocolException e) {
            log.warn("mux {} protocol error, sending GoAway({}): {}", role, e.goAwayCode(), e.getMessage());
            goAwayAndClose(e.goAwayCode());
        } catch (RuntimeException e) {
            log.warn("mux {} internal error while reading", role, e);
            goAwayAndClose(GO_AWAY_INTERNAL_ERROR);
        }
    }

    /**
     * Records traffic from the peer that does not pass through {@link #receive} (e.g. WebSocket
     * ping or pong frames), so that it counts as liveness for the keepalive.
     */
    public void markInbound() {
        lastInboundNanos = System.nanoTime();
    }

    /** How long nothing has arrived from the peer (time since the last inbound byte or {@link #markInbound()}). */
    public Duration silence() {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - lastInboundNanos));
    }

    /** Reports that the transport is closed (the peer went away, or we closed it); ends the session. */
    public void transportClosed(Throwable cause) {
        end(cause);
    }

    // ---- called by MuxStreamChannel ------------------------------------------------------------

    EventLoopGroup eventLoopGroup() {
        return group;
    }

    /**
     * The single event loop this session runs on (its socket's, with the Netty transport), or null
     * when it spreads over a group: channels registered there hand nothing across threads to it.
     */
    public EventLoop eventLoop() {
        return group instanceof EventLoop loop ? loop : null;
    }

    IOException openRefusal() {
        if (state.get().compareTo(State.CLOSING) >= 0) {
            return new ConnectException("mux session closed");
        }
        if (remoteGoAway) {
            return new ConnectException("mux peer sent GoAway");
        }
        return null;
    }

    /**
     * Allocates an id and a {@link MuxStream} for {@code ch}, sends the SYN and registers it;
     * throws ConnectException if not possible.
     */
    MuxStream attachOutbound(MuxStreamChannel ch) throws ConnectException {
        IOException refusal = openRefusal();
        if (refusal != null) {
            throw (ConnectException) refusal;
        }
        if (pendingOpens.incrementAndGet() > config.maxPendingOpens()) {
            pendingOpens.decrementAndGet();
            throw new ConnectException("too many mux streams awaiting ACK (" + config.maxPendingOpens() + ")");
        }
        long id = nextStreamId.getAndAdd(2);
        if (id > 0xFFFF_FFFFL) {
            pendingOpens.decrementAndGet();
            throw new ConnectException("mux stream ids exhausted");
        }
        int sid = (int) id;
        MuxStream st = new MuxStream(sid, MuxStream.Handshake.SYN_SENT, INITIAL_STREAM_WINDOW, config.initialStreamWindow());
        // the stream must be on the channel before the SYN leaves: the peer's RST or ACK can arrive
        // on the reader thread before attachOutbound returns, and the reader forgets streams by id
        ch.attach(st);
        streams.put(sid, ch);
        if (state.get() == State.ENDED) {
            // end() may have swept the map before this put
            streams.remove(sid, ch);
            pendingOpens.decrementAndGet();
            throw new ConnectException("mux session closed");
        }
        if (!control(TYPE_WINDOW_UPDATE, FLAG_SYN, sid, windowSurplus())) {
            streams.remove(sid, ch);
            pendingOpens.decrementAndGet();
            throw new ConnectException("mux session closed");
        }
        return st;
    }

    /** A stream delivered or dropped {@code bytes} of inbound Data it held. */
    void inboundReleased(long bytes) {
        if (bytes > 0) {
            bufferedInbound.addAndGet(-bytes);
        }
    }

    void releasePendingAccept() {
        pendingAccepts.decrementAndGet();
    }

    /** Bytes beyond the yamux initial window that we grant on SYN/ACK. */
    int windowSurplus() {
        return config.initialStreamWindow() - INITIAL_STREAM_WINDOW;
    }

    /** Sends the ACK of a peer-opened stream, once, unless the stream was reset. */
    void sendAckIfPending(MuxStreamChannel ch) {
        MuxStream st = ch.stream();
        if (!st.isReset() && st.leaveSynReceived()) {
            control(TYPE_WINDOW_UPDATE, FLAG_ACK, st.id(), windowSurplus());
        }
    }

    /** Grants the peer {@code delta} more bytes on {@code st} (the window grows before the frame leaves). */
    boolean sendWindowUpdate(MuxStream st, int delta) {
        st.grant(delta);
        return control(TYPE_WINDOW_UPDATE, 0, st.id(), delta);
    }

    /** Queues Data on {@code st}; the payload is at most the stream's send window. */
    boolean sendData(MuxStream st, ByteBuf payload) {
        st.sent(payload.readableBytes());
        return writer.sendData(OutFrame.data(st.id(), payload));
    }

    boolean hasDataRoom() {
        return writer.hasDataRoom();
    }

    void awaitDataRoom(Runnable wake) {
        writer.awaitDataRoom(wake);
    }

    /** A stream woken for room has had its turn: wake the next waiters if room is left. */
    void passDataRoom() {
        writer.wakeIfRoom();
    }

    /** Queues our FIN behind the stream's data. */
    void sendFin(MuxStreamChannel ch) {
        MuxStream st = ch.stream();
        st.finSent();
        writer.sendData(new OutFrame(TYPE_WINDOW_UPDATE, FLAG_FIN, st.id(), 0, null, null));
        maybeForget(ch);
    }

    /** Sends RST (ahead of data) and forgets the stream. */
    void sendReset(MuxStreamChannel ch) {
        MuxStream st = ch.stream();
        st.reset();
        control(TYPE_WINDOW_UPDATE, FLAG_RST, st.id(), 0);
        maybeForget(ch);
    }

    /**
     * The channel of {@code ch} closed (on its loop): releases its pending open, then ends the
     * stream unless it was reset already: RST if {@code abort} or our ACK never went out, else our
     * FIN (once). Returns true if the stream now waits for the peer's FIN.
     */
    boolean channelClosed(MuxStreamChannel ch, boolean abort) {
        MuxStream st = ch.stream();
        releasePendingOpen(st);
        if (st.isReset()) {
            return false;
        }
        if (st.leaveSynReceived() || abort) {
            sendReset(ch);
            return false;
        }
        if (!st.localFinSent()) {
            sendFin(ch);
        }
        return true;
    }

    /** Removes a stream once both FINs were exchanged or it was reset. */
    private void maybeForget(MuxStreamChannel ch) {
        MuxStream st = ch.stream();
        if (st.isFinished()) {
            streams.remove(st.id(), ch);
        }
    }

    // ---- internals -----------------------------------------------------------------------------

    private boolean control(int type, int flags, int streamId, int length) {
        try {
            return writer.sendControl(OutFrame.control(type, flags, streamId, length));
        } catch (IllegalStateException overflow) {
            log.warn("mux {}: {}; ending session", role, overflow.getMessage());
            goAwayAndClose(GO_AWAY_INTERNAL_ERROR);
            return false;
        }
    }

    private void goAwayAndClose(int code) {
        goAwayAndClose(code, null);
    }

    /** Queues GoAway(code) as the last frame, then closes the transport; {@code cause} is the reported end. */
    private void goAwayAndClose(int code, Throwable cause) {
        Throwable reason = cause != null ? cause
                : code == GO_AWAY_NORMAL ? null : new IOException("mux session ended with GoAway(" + code + ")");
        advance(State.CLOSING);
        Runnable finish = () -> {
            transport.close();
            end(reason);
        };
        writer.closeAfter(new OutFrame(TYPE_GO_AWAY, 0, SESSION_STREAM_ID, code, null, finish));
        if (reason != null) {
            end(reason);
        }
        // the transport may never complete the write; do not let a stuck peer keep the session open
        group.next().schedule(finish, 2, TimeUnit.SECONDS);
    }

    private void onTransportFailure(Throwable cause) {
        log.debug("mux {} transport write failed", role, cause);
        transport.close();
        end(cause);
    }

    private void end(Throwable cause) {
        if (advance(State.ENDED) == State.ENDED) {
            return;
        }
        ScheduledFuture<?> ka = keepAlive;
        if (ka != null) {
            ka.cancel(false);
        }
        decoderRelease();
        writer.close();
        for (MuxStreamChannel ch : new ArrayList<>(streams.values())) {
            ch.stream().reset();
            ch.onInbound(MuxStreamChannel.Event.SESSION_END, null);
        }
        streams.clear();
        ClosedChannelException closed = new ClosedChannelException();
        for (PendingPing p : pings.values()) {
            p.future.completeExceptionally(closed);
        }
        pings.clear();
        log.debug("mux {} session ended: {}", role, cause == null ? "closed" : cause.toString());
        closeFuture.complete(null);
    }

    private void decoderRelease() {
        // the reader thread may be inside decode(); release() only marks and frees a partial payload
        synchronized (decoder) {
            decoder.release();
            bufferedInbound.addAndGet(-reservedInFlight);
            reservedInFlight = 0;
        }
    }

    private void startKeepAlive() {
        if (config.keepAliveInterval().isZero()) {
            return;
        }
        scheduleKeepAlive(config.keepAliveInterval().toNanos());
    }

    /** Moves the state forward to {@code next} (never back); returns the state it had before. */
    private State advance(State next) {
        for (;;) {
            State current = state.get();
            if (current.compareTo(next) >= 0 || state.compareAndSet(current, next)) {
                return current;
            }
        }
    }

    private void scheduleKeepAlive(long delayNanos) {
        if (state.get() == State.ENDED) {
            return;
        }
        keepAlive = group.next().schedule(this::keepAliveTick, Math.max(delayNanos, 1_000_000), TimeUnit.NANOSECONDS);
    }

    /**
     * Liveness is any inbound traffic, not only ping ACKs: a busy link whose ACKs queue behind data
     * is never cut. A ping is sent once the peer has been quiet for the interval; the session ends
     * (GoAway first) once it has been quiet for the timeout.
     */
    private void keepAliveTick() {
        if (!isOpen()) {
            return;
        }
        long now = System.nanoTime();
        long last = lastInboundNanos;
        long silent = now - last;
        long interval = config.keepAliveInterval().toNanos();
        long timeout = config.keepAliveTimeout().toNanos();
        if (silent >= timeout) {
            log.warn("mux {} peer silent for {} ms (keepAliveTimeout {}); sending GoAway and ending session",
                    role, TimeUnit.NANOSECONDS.toMillis(silent), config.keepAliveTimeout());
            goAwayAndClose(GO_AWAY_NORMAL, new TimeoutException(
                    "mux keepalive: nothing received from the peer for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms"));
            return;
        }
        boolean pingedThisSilence = lastKeepAlivePingNanos - last >= 0 && lastKeepAlivePingNanos != 0;
        if (silent >= interval && !pingedThisSilence) {
            lastKeepAlivePingNanos = now;
            ping(); // the answer (or any other frame) refreshes lastInboundNanos
            pingedThisSilence = true;
        }
        long untilPing = pingedThisSilence ? Long.MAX_VALUE : interval - silent;
        scheduleKeepAlive(Math.min(untilPing, timeout - silent));
    }

    private void acceptInbound(FrameHeader h) throws MuxProtocolException {
        int id = h.streamId();
        if (id == SESSION_STREAM_ID || role.owns(id)) {
            throw MuxProtocolException.protocolError("peer opened stream %d from our id space", Integer.toUnsignedLong(id));
        }
        if (streams.containsKey(id)) {
            throw MuxProtocolException.protocolError("duplicate SYN for stream %d", Integer.toUnsignedLong(id));
        }
        long sendWindow = INITIAL_STREAM_WINDOW + (h.type() == TYPE_WINDOW_UPDATE ? h.lengthAsLong() : 0);
        if (sendWindow > MAX_WINDOW) {
            throw MuxProtocolException.protocolError("SYN window %d for stream %d exceeds 2^32-1",
                    sendWindow, Integer.toUnsignedLong(id));
        }
        State now = state.get();
        if (now != State.OPEN || pendingAccepts.get() >= config.acceptBacklog()) {
            log.debug("mux {} refusing stream {} (backlog {}, session {})", role, id, pendingAccepts.get(), now);
            peerInducedControl(OutFrame.control(TYPE_WINDOW_UPDATE, FLAG_RST, id, 0));
            return;
        }
        MuxStream st = new MuxStream(id, MuxStream.Handshake.SYN_RECEIVED, sendWindow, config.initialStreamWindow());
        MuxStreamChannel ch = new MuxStreamChannel(this, st, acceptor instanceof MuxChildAcceptor);
        streams.put(id, ch);
        pendingAccepts.incrementAndGet();
        // the ACK goes out once the stream was accepted (Go ACKs on Accept), so a refusal is a plain RST
        if (acceptor instanceof MuxChildAcceptor childAcceptor) {
            try {
                childAcceptor.acceptUnregistered(this, ch);
            } catch (RuntimeException e) {
                log.warn("mux {} acceptor failed for stream {}", role, id, e);
                ch.refuseUnregistered();
            }
            return;
        }
        group.next().register(ch).addListener(reg -> {
            if (!reg.isSuccess()) {
                ch.refuseUnregistered();
                return;
            }
            try {
                acceptor.accept(this, ch);
                ch.sendAckIfPending();
            } catch (RuntimeException e) {
                log.warn("mux {} acceptor failed for stream {}", role, id, e);
                ch.reset();
            }
        });
    }

    /**
     * Queues a control frame the peer's input made necessary (ping reply, refusal RST). The peer
     * controls how many of these arise, so a full control lane means it is flooding us: protocol
     * error, not internal error.
     */
    private void peerInducedControl(OutFrame frame) throws MuxProtocolException {
        try {
            writer.sendControl(frame);
        } catch (IllegalStateException overflow) {
            throw MuxProtocolException.protocolError("control frame flood: %s", overflow.getMessage());
        }
    }

    /**
     * Reserves {@code bytes} of the session receive buffer for an inbound Data payload; false if
     * that would exceed {@link MuxConfig#maxSessionReceiveBuffer()}. Reader thread only.
     */
    private boolean reserveInbound(long bytes) {
        long cap = config.maxSessionReceiveBuffer();
        for (;;) {
            long cur = bufferedInbound.get();
            if (cur + bytes > cap) {
                return false;
            }
            if (bufferedInbound.compareAndSet(cur, cur + bytes)) {
                reservedInFlight = bytes;
                return true;
            }
        }
    }

    /** The session receive buffer is full: RST the stream whose Data would overflow it. */
    private void resetOverCap(MuxStreamChannel ch, long frameLength) {
        log.warn("mux {} stream {}: {} more bytes would exceed the session receive buffer ({} of {} held); resetting the stream",
                role, Integer.toUnsignedLong(ch.streamId()), frameLength, bufferedInbound.get(), config.maxSessionReceiveBuffer());
        releasePendingOpen(ch.stream());
        sendReset(ch);
        ch.onInbound(MuxStreamChannel.Event.LOCAL_RST, null);
    }

    /** Our SYN is answered (ACK or RST) or given up: the open no longer counts toward maxPendingOpens (once). */
    private void releasePendingOpen(MuxStream st) {
        if (st.leaveSynSent()) {
            pendingOpens.decrementAndGet();
        }
    }

    /** Refuses a stream that never got registered: RST instead of our ACK, unless already reset. */
    void refuse(MuxStreamChannel ch) {
        MuxStream st = ch.stream();
        st.leaveSynReceived();
        if (!st.isReset()) {
            sendReset(ch);
        }
    }

    private record PendingPing(long startNanos, CompletableFuture<Duration> future) {
    }

    /** Frame dispatch on the reader thread. */
    private final class Reader implements FrameListener {

        @Override
        public long onHeader(FrameHeader h) throws MuxProtocolException {
            switch (h.type()) {
                case TYPE_DATA:
                case TYPE_WINDOW_UPDATE:
                    return onStreamHeader(h);
                case TYPE_PING:
                    onPing(h);
                    return DISCARD;
                case TYPE_GO_AWAY:
                    onGoAway(h);
                    return DISCARD;
                default:
                    throw MuxProtocolException.protocolError("invalid type %d", h.type());
            }
        }

        private long onStreamHeader(FrameHeader h) throws MuxProtocolException {
            if (h.hasFlag(FLAG_SYN)) {
                acceptInbound(h);
            }
            MuxStreamChannel ch = streams.get(h.streamId());
            if (ch == null) {
                // unknown or already forgotten stream: Go discards the payload and sends nothing
                if (h.type() == TYPE_WINDOW_UPDATE || h.length() == 0) {
                    log.debug("mux {} ignoring {} for unknown stream", role, h);
                }
                return DISCARD;
            }
            if (h.hasFlag(FLAG_ACK)) {
                onAck(ch);
            }
            MuxStream st = ch.stream();
            if (h.type() == TYPE_DATA) {
                long window = Math.max(0, st.receiveWindow());
                long length = h.lengthAsLong();
                if (length == 0 || length > window) {
                    return window; // empty, or a window violation the decoder reports
                }
                if (!reserveInbound(length)) {
                    resetOverCap(ch, length);
                    return DISCARD;
                }
                return window;
            }
            if (!h.hasFlag(FLAG_SYN) && h.length() != 0) {
                long window = st.granted(h.lengthAsLong());
                if (window > MAX_WINDOW) {
                    throw MuxProtocolException.protocolError("window update of %d pushes the send window of stream %d to %d, past 2^32-1",
                            h.lengthAsLong(), Integer.toUnsignedLong(h.streamId()), window);
                }
                ch.onInbound(MuxStreamChannel.Event.WINDOW, null);
            }
            onEndFlags(h, ch);
            return DISCARD;
        }

        @Override
        public void onDataPayload(FrameHeader h, ByteBuf payload) {
            reservedInFlight = 0; // from here on the channel (or this method) accounts for the bytes
            MuxStreamChannel ch = streams.get(h.streamId());
            if (ch == null) {
                inboundReleased(payload.readableBytes());
                payload.release();
                return;
            }
            if (payload.isReadable()) {
                ch.stream().received(payload.readableBytes());
                ch.onInbound(MuxStreamChannel.Event.DATA, payload);
            } else {
                payload.release();
            }
            onEndFlags(h, ch);
        }

        private void onAck(MuxStreamChannel ch) {
            releasePendingOpen(ch.stream());
            ch.onInbound(MuxStreamChannel.Event.ACK, null);
        }

        private void onEndFlags(FrameHeader h, MuxStreamChannel ch) {
            MuxStream st = ch.stream();
            if (h.hasFlag(FLAG_FIN) && st.finReceived()) {
                ch.onInbound(MuxStreamChannel.Event.FIN, null);
                maybeForget(ch);
            }
            if (h.hasFlag(FLAG_RST)) {
                st.reset();
                releasePendingOpen(st);
                ch.onInbound(MuxStreamChannel.Event.RST, null);
                maybeForget(ch);
            }
        }

        private void onPing(FrameHeader h) throws MuxProtocolException {
            if (h.hasFlag(FLAG_SYN)) {
                if (pendingPingReplies.get() >= config.maxPendingPingReplies()) {
                    throw MuxProtocolException.protocolError("ping flood: %d ping replies not yet written", pendingPingReplies.get());
                }
                pendingPingReplies.incrementAndGet();
                peerInducedControl(new OutFrame(TYPE_PING, FLAG_ACK, SESSION_STREAM_ID, h.length(), null,
                        pendingPingReplies::decrementAndGet));
            } else if (h.hasFlag(FLAG_ACK)) {
                PendingPing p = pings.remove(h.length());
                if (p != null) {
                    long rtt = System.nanoTime() - p.startNanos;
                    lastRoundTripNanos = rtt;
                    p.future.complete(Duration.ofNanos(rtt));
                }
            }
        }

        private void onGoAway(FrameHeader h) {
            if (h.length() == GO_AWAY_NORMAL) {
                log.debug("mux {} peer sent GoAway(0)", role);
                remoteGoAway = true;
                return;
            }
            log.warn("mux {} peer sent GoAway({}); ending session", role, h.lengthAsLong());
            transport.close();
            end(new IOException("mux peer sent GoAway(" + h.lengthAsLong() + ")"));
        }
    }
}
