package io.agentbox.mux;

import io.netty.buffer.ByteBuf;
import io.netty.channel.AbstractChannel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ChannelOutputShutdownException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A Netty channel for one yamux stream, in the manner of Netty's HTTP/2 child channels.
 *
 * <p><b>Lifecycle.</b> Streams the peer opened are created by the session and are active at once
 * (our ACK is already queued). A channel created with the public constructor (e.g. by gRPC's
 * bootstrap) becomes a stream on {@code connect(address)}, where the address is a
 * {@link MuxSessionLocator}: connect sends the SYN and completes on the peer's ACK; it fails with
 * {@link ConnectException} if there is no open session or the peer answers with RST.
 *
 * <p><b>Flow control</b> (yamux spec "Flow Control"). Outbound bytes stay in the channel's
 * {@link ChannelOutboundBuffer} while the send window is 0, so writability follows the window;
 * each Data frame is at most min(window, {@link MuxConfig#writeChunkSize()}). Inbound data is
 * delivered only on {@code read()} (or with auto-read) and the receive window is replenished for
 * bytes delivered, in updates of at least half the window.
 *
 * <p><b>Closing.</b> {@link #shutdownOutput()} sends FIN after queued data and keeps reading.
 * {@code close()} sends FIN, or RST if unsent data is dropped or {@link #reset()} was called;
 * bytes that still arrive after close are discarded and credited so the peer never stalls. A peer
 * FIN shuts input (closing the channel unless ALLOW_HALF_CLOSURE); a peer RST or the end of the
 * session closes the channel. {@code shutdownOutput()} flushes what was written before it, so the
 * FIN always follows every byte written before the request.
 *
 * <p><b>Threads.</b> The channel's own fields (Netty's concerns: delivery, outbound buffer,
 * promises, timers) are touched on its event loop only. The stream's protocol state (open,
 * half-closed, closed or reset; handshake; both windows) is a {@link MuxStream} that only the
 * session changes, in its frame handlers, under the stream's lock: the reader runs on the socket's
 * thread, which is not this loop for Jetty sessions, gRPC's channels (registered on
 * {@link MuxEventLoops#shared()}) or a configured {@link MuxConfig#eventLoopGroup()}. The session
 * tells the channel what changed through {@link Event}s posted to this loop (held in a mailbox
 * until registration).
 */
public final class MuxStreamChannel extends AbstractChannel {

    /** What the session tells the channel; its {@link MuxStream} has already changed. */
    enum Event {
        /** Data arrived (the payload comes with the event). */
        DATA,
        /** The send window grew: resume writing. */
        WINDOW,
        /** The peer acknowledged our SYN. */
        ACK,
        /** The peer sent FIN. */
        FIN,
        /** The peer sent RST. */
        RST,
        /** The session ended. */
        SESSION_END,
        /** We reset the stream from the reader (session receive buffer full); RST already sent. */
        LOCAL_RST
    }

    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);

    private final MuxStreamChannelConfig config = new MuxStreamChannelConfig(this, this::autoReadCleared);

    // written once (constructor, or connect on the event loop), read by the session reader
    private volatile MuxSession session;
    /** The protocol state, changed by the session only; null before connect. */
    private volatile MuxStream stream;
    private volatile SocketAddress remoteAddress;

    /** Inbound streams: counted in the session's pending accepts until registered or refused. */
    private final AtomicBoolean acceptSlot = new AtomicBoolean();
    /** Inbound streams handed to a {@link MuxChildAcceptor}: ACK when registered. */
    private final boolean ackOnRegister;

    // events that arrive before registration (accepted streams); guarded by this
    private ArrayDeque<Inbound> mailbox;

    // event-loop state
    private final ArrayDeque<ByteBuf> inbound = new ArrayDeque<>();
    private long unackedConsumed;
    private boolean readPending;
    private boolean active;
    private volatile boolean closed;
    private boolean inputShutdown;
    /** The peer's FIN event reached the event loop (the stream's state changed earlier, on the reader). */
    private boolean finEvent;
    private boolean finRequested;
    private ChannelPromise finPromise;
    private ChannelPromise connectPromise;
    private boolean resetRequested;
    private boolean pendingOutbound;
    private boolean waitingForRoom;
    private Future<?> closeTimeout;
    /** Armed while writes wait for send window (see {@link MuxConfig#streamWriteTimeout()}). */
    private Future<?> windowStall;

    /** For bootstraps (gRPC): the channel becomes a stream on {@code connect(MuxSessionLocator)}. */
    public MuxStreamChannel() {
        super(null);
        this.ackOnRegister = false;
    }

    /**
     * A stream the peer opened; active from the start.
     *
     * @param ackOnRegister the ACK goes out when the channel is registered (a {@link MuxChildAcceptor}
     *     registers it), not when the session's acceptor returns
     */
    MuxStreamChannel(MuxSession session, MuxStream stream, boolean ackOnRegister) {
        super(null);
        this.session = session;
        this.stream = stream;
        this.ackOnRegister = ackOnRegister;
        this.remoteAddress = new MuxStreamAddress(session.role() == MuxRole.CLIENT ? MuxRole.SERVER : MuxRole.CLIENT,
                stream.id(), session);
        this.active = true;
        this.mailbox = new ArrayDeque<>();
        this.acceptSlot.set(true);
    }

    /** The yamux stream id (unsigned), 0 before connect. */
    public int streamId() {
        MuxStream st = stream;
        return st == null ? 0 : st.id();
    }

    /** The stream's protocol state; null before connect. */
    MuxStream stream() {
        return stream;
    }

    /** Set by the session when it allocates an outbound stream, before the SYN is sent. */
    void attach(MuxStream st) {
        stream = st;
    }

    private boolean localFinSent() {
        MuxStream st = stream;
        return st != null && st.localFinSent();
    }

    /** The session this stream belongs to; {@code null} before connect. */
    public MuxSession session() {
        return session;
    }

    /** Sends FIN after all queued data; the channel keeps reading until the peer's FIN. */
    public ChannelFuture shutdownOutput() {
        ChannelPromise promise = newPromise();
        if (eventLoop().inEventLoop()) {
            shutdownOutput0(promise);
        } else {
            eventLoop().execute(() -> shutdownOutput0(promise));
        }
        return promise;
    }

    /** True once our FIN is queued or requested. */
    public boolean isOutputShutdown() {
        return finRequested || localFinSent();
    }

    /** True once the peer's FIN was delivered. */
    public boolean isInputShutdown() {
        return inputShutdown;
    }

    /** Closes the stream with RST instead of FIN (the peer's reads fail). */
    public ChannelFuture reset() {
        if (!isRegistered()) {
            refuseUnregistered();
            return newSucceededFuture();
        }
        ChannelPromise promise = newPromise();
        if (eventLoop().inEventLoop()) {
            resetRequested = true;
            close(promise);
        } else {
            eventLoop().execute(() -> {
                resetRequested = true;
                close(promise);
            });
        }
        return promise;
    }

    @Override
    public MuxStreamChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    @Override
    public boolean isActive() {
        return active && !closed;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new StreamUnsafe();
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return true;
    }

    @Override
    protected SocketAddress localAddress0() {
        MuxSession s = session;
        return s == null ? null : new MuxStreamAddress(s.role(), streamId());
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remoteAddress;
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        if (acceptSlot.compareAndSet(true, false)) {
            session.releasePendingAccept();
        }
        if (ackOnRegister) {
            sendAckIfPending();
        }
        synchronized (this) {
            if (mailbox != null && !mailbox.isEmpty()) {
                ArrayDeque<Inbound> early = mailbox;
                // runs after registration completes (channelActive fired), before later events
                eventLoop().execute(() -> early.forEach(e -> handle(e.event, e.data)));
            }
            mailbox = null;
        }
        promise.setSuccess();
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        throw new UnsupportedOperationException("mux streams cannot be bound");
    }

    @Override
    protected void doDisconnect() throws Exception {
        doClose();
    }

    private void autoReadCleared() {
        if (eventLoop().inEventLoop()) {
            readPending = false;
        } else {
            eventLoop().execute(() -> readPending = config.isAutoRead() && readPending);
        }
    }

    @Override
    protected void doBeginRead() {
        if (closed) {
            return;
        }
        readPending = true;
        deliver();
    }

    @Override
    protected Object filterOutboundMessage(Object msg) throws Exception {
        if (msg instanceof ByteBuf) {
            if (finRequested || localFinSent()) {
                throw new ChannelOutputShutdownException("mux stream output is shut down");
            }
            return msg;
        }
        throw new UnsupportedOperationException("mux streams carry ByteBuf only, not " + msg.getClass().getName());
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        MuxSession s = session;
        MuxStream st = stream;
        int chunk = s.config().writeChunkSize();
        for (;;) {
            Object msg = in.current();
            if (msg == null) {
                pendingOutbound = false;
                if (finRequested && !st.localFinSent()) {
                    sendFin();
                }
                return;
            }
            ByteBuf buf = (ByteBuf) msg;
            int readable = buf.readableBytes();
            if (readable == 0) {
                in.remove();
                continue;
            }
            pendingOutbound = true;
            long sendWindow = st.sendWindow();
            if (sendWindow <= 0) {
                armWindowStall(s);
                return; // resumed by a window update
            }
            if (!s.hasDataRoom()) {
                if (!waitingForRoom) {
                    waitingForRoom = true;
                    s.awaitDataRoom(this::wakeForRoom);
                }
                return;
            }
            int n = (int) Math.min(Math.min(readable, sendWindow), chunk);
            ByteBuf payload = buf.retainedSlice(buf.readerIndex(), n);
            if (!s.sendData(st, payload)) {
                // session gone: the write fails and the stream ends (the session end closes us too).
                // An IOException, not a bare ClosedChannelException: this write can notice the loss
                // before SESSION_END has closed the channel, and grpc-netty maps a cause-less
                // ClosedChannelException ("closed earlier, reason unknown") to UNKNOWN, IOException
                // to UNAVAILABLE; Netty closes the channel on an IOException from doWrite (autoClose).
                throw new IOException("mux session ended");
            }
            in.removeBytes(n);
        }
    }

    @Override
    protected void doClose() {
        if (closed) {
            return;
        }
        boolean dropped = pendingOutbound;
        cancelWindowStall();
        closed = true;
        active = false;
        releaseInbound();
        releaseMailbox();
        MuxSession s = session;
        if (s != null && stream != null) {
            if (acceptSlot.compareAndSet(true, false)) {
                s.releasePendingAccept();
            }
            if (s.channelClosed(this, resetRequested || dropped || connectPromise != null)) {
                scheduleCloseTimeout(s);
            }
        }
        if (connectPromise != null) {
            connectPromise.tryFailure(new ConnectException("mux stream closed before the peer's ACK"));
            connectPromise = null;
        }
        if (finPromise != null) {
            finPromise.tryFailure(new ClosedChannelException());
            finPromise = null;
        }
    }

    private void armWindowStall(MuxSession s) {
        long ms = s.config().streamWriteTimeout().toMillis();
        if (windowStall != null || ms == 0 || closed) {
            return;
        }
        windowStall = eventLoop().schedule(() -> {
            windowStall = null;
            if (closed || !pendingOutbound || stream.sendWindow() > 0) {
                return;
            }
            IOException timedOut = new IOException("mux stream " + Integer.toUnsignedString(streamId())
                    + ": write timed out, the peer granted no send window for " + ms + " ms; stream reset");
            ChannelOutboundBuffer out = unsafe().outboundBuffer();
            if (out != null) {
                while (out.current() != null) {
                    out.remove(timedOut);
                }
            }
            pendingOutbound = false;
            resetRequested = true;
            if (isActive()) {
                pipeline().fireExceptionCaught(timedOut);
            }
            closeNow();
        }, ms, TimeUnit.MILLISECONDS);
    }

    private void cancelWindowStall() {
        if (windowStall != null) {
            windowStall.cancel(false);
            windowStall = null;
        }
    }

    /** Like Go's StreamCloseTimeout: a peer that never sends its FIN gets RST and the stream is forgotten. */
    private void scheduleCloseTimeout(MuxSession s) {
        long ms = s.config().streamCloseTimeout().toMillis();
        if (!stream.peerMaySend() || ms == 0 || !isRegistered()) {
            return;
        }
        closeTimeout = eventLoop().schedule(() -> {
            if (stream.peerMaySend()) {
                s.sendReset(this);
            }
        }, ms, TimeUnit.MILLISECONDS);
    }

    // ---- called by MuxSession (reader thread) ----------------------------------------------------

    /** Hands an event to the event loop, or to the mailbox before registration. */
    void onInbound(Event event, ByteBuf data) {
        synchronized (this) {
            if (mailbox != null) {
                mailbox.add(new Inbound(event, data));
                return;
            }
        }
        try {
            eventLoop().execute(() -> handle(event, data));
        } catch (RejectedExecutionException | IllegalStateException e) {
            releaseData(data);
        }
    }

    /** Sends the ACK of an inbound stream once, unless it was closed (then RST goes instead). */
    void sendAckIfPending() {
        if (!closed) {
            session.sendAckIfPending(this);
        }
    }

    /** RST for a stream that was never registered (no acceptor, or its registration failed). */
    void refuseUnregistered() {
        if (acceptSlot.compareAndSet(true, false)) {
            session.releasePendingAccept();
        }
        synchronized (this) {
            closed = true;
            active = false;
        }
        releaseMailbox();
        if (session != null && stream != null) {
            session.refuse(this);
        }
    }

    // ---- event loop ---------------------------------------------------------------------------

    private void handle(Event event, ByteBuf data) {
        switch (event) {
            case DATA -> onData(data);
            case WINDOW -> {
                cancelWindowStall();
                if (pendingOutbound && !closed) {
                    ((StreamUnsafe) unsafe()).resumeWrite();
                }
            }
            case ACK -> onAck();
            case FIN -> {
                finEvent = true;
                if (closeTimeout != null) {
                    closeTimeout.cancel(false);
                    closeTimeout = null;
                }
                deliver();
            }
            case RST -> abortAndCancel(new ConnectException("mux stream refused by peer (RST)"));
            case SESSION_END -> abortAndCancel(new ConnectException("mux session ended"));
            case LOCAL_RST -> abortAndCancel(new IOException(
                    "mux stream reset: session receive buffer (maxSessionReceiveBuffer) full"));
            default -> throw new IllegalArgumentException("event " + event);
        }
    }

    private void onData(ByteBuf data) {
        if (closed || inputShutdown) {
            // we no longer read; discard but credit so the peer's writer does not stall
            int n = data.readableBytes();
            releaseData(data);
            if (n > 0 && stream.peerMaySend()) {
                session.sendWindowUpdate(stream, n);
            }
            return;
        }
        inbound.add(data);
        deliver();
    }

    private void onAck() {
        if (connectPromise == null) {
            return;
        }
        ChannelPromise p = connectPromise;
        connectPromise = null;
        active = true;
        if (p.trySuccess()) {
            pipeline().fireChannelActive();
        } else {
            closeNow();
        }
    }

    private void abortAndCancel(Throwable cause) {
        if (closeTimeout != null) {
            closeTimeout.cancel(false);
            closeTimeout = null;
        }
        abort(cause);
    }

    private void abort(Throwable cause) {
        if (connectPromise != null) {
            connectPromise.tryFailure(cause);
            connectPromise = null;
        } else if (!closed && isActive()) {
            // An established stream lost abruptly (RST, session end) is reported like a socket
            // reset: exceptionCaught first, then close. Without it grpc-netty learns of the loss
            // only from writes failing on the closed channel (bare ClosedChannelException before
            // channelInactive runs) and fails in-flight calls with UNKNOWN instead of UNAVAILABLE.
            pipeline().fireExceptionCaught(cause);
        }
        if (!closed) {
            closeNow();
        }
    }

    private void deliver() {
        if (closed) {
            return;
        }
        if (readPending && !inbound.isEmpty()) {
            readPending = false;
            long delivered = 0;
            ByteBuf b;
            while (!closed && (b = inbound.poll()) != null) {
                int n = b.readableBytes();
                delivered += n;
                session.inboundReleased(n);
                pipeline().fireChannelRead(b);
            }
            credit(delivered);
            pipeline().fireChannelReadComplete();
        }
        if (finEvent && inbound.isEmpty() && !inputShutdown && !closed) {
            inputShutdown = true;
            pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            if (!config.isAllowHalfClosure() || localFinSent()) {
                closeNow();
            } else {
                pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
            }
        }
    }

    private void credit(long delivered) {
        unackedConsumed += delivered;
        int window = session.config().initialStreamWindow();
        if (unackedConsumed >= window / 2 && stream.peerMaySend()) {
            int delta = (int) unackedConsumed;
            unackedConsumed = 0;
            session.sendWindowUpdate(stream, delta);
        }
    }

    private void shutdownOutput0(ChannelPromise promise) {
        if (closed) {
            promise.setFailure(new ClosedChannelException());
            return;
        }
        if (localFinSent()) {
            promise.setSuccess();
            return;
        }
        if (finPromise != null) {
            finPromise.addListener(f -> {
                if (f.isSuccess()) {
                    promise.setSuccess();
                } else {
                    promise.setFailure(f.cause());
                }
            });
            return;
        }
        finRequested = true;
        finPromise = promise;
        // Everything written before the FIN request goes first, flushed or not: a handler may ask
        // for the FIN from inside its own write (the write made the channel unwritable and fired
        // channelWritabilityChanged before its flush), and a FIN sent while that write was still
        // unflushed overtook it; the peer read EOF and lost the last bytes (32 KiB short in CI).
        // flush() writes what the window allows and sends the FIN once the buffer is drained.
        unsafe().flush();
        ChannelOutboundBuffer out = unsafe().outboundBuffer();
        if (!localFinSent() && (out == null || out.isEmpty())) {
            sendFin();
        }
    }

    private void sendFin() {
        session.sendFin(this);
        if (finPromise != null) {
            finPromise.trySuccess();
            finPromise = null;
        }
        if (inputShutdown) {
            closeNow();
        }
    }

    private void wakeForRoom() {
        try {
            eventLoop().execute(() -> {
                waitingForRoom = false;
                if (!closed) {
                    ((StreamUnsafe) unsafe()).resumeWrite();
                }
                session.passDataRoom();
            });
        } catch (RejectedExecutionException ignored) {
            // event loop gone; nothing left to write
        }
    }

    private void closeNow() {
        unsafe().close(unsafe().voidPromise());
    }

    private void releaseInbound() {
        ByteBuf b;
        while ((b = inbound.poll()) != null) {
            releaseData(b);
        }
    }

    private void releaseMailbox() {
        ArrayDeque<Inbound> m;
        synchronized (this) {
            m = mailbox;
            mailbox = null;
        }
        if (m != null) {
            m.forEach(e -> releaseData(e.data));
        }
    }

    /** Drops inbound Data the session counted against its receive buffer. */
    private void releaseData(ByteBuf data) {
        if (data != null) {
            session.inboundReleased(data.readableBytes());
            ReferenceCountUtil.release(data);
        }
    }

    private record Inbound(Event event, ByteBuf data) {
    }

    private final class StreamUnsafe extends AbstractUnsafe {

        @Override
        public void connect(SocketAddress remote, SocketAddress local, ChannelPromise promise) {
            if (!promise.setUncancellable() || !ensureOpen(promise)) {
                return;
            }
            if (session != null || connectPromise != null) {
                promise.setFailure(new AlreadyConnectedException());
                return;
            }
            MuxSession s = remote instanceof MuxSessionLocator locator ? locator.currentSession() : null;
            if (s == null) {
                promise.setFailure(new ConnectException("no mux session for " + remote));
                return;
            }
            try {
                session = s;
                remoteAddress = remote;
                connectPromise = promise;
                int streamId = s.attachOutbound(MuxStreamChannel.this).id();
                int timeoutMs = config.getConnectTimeoutMillis();
                if (timeoutMs > 0) {
                    eventLoop().schedule(() -> {
                        if (connectPromise == promise && promise.tryFailure(new ConnectTimeoutException(
                                "no ACK for mux stream " + Integer.toUnsignedString(streamId) + " within " + timeoutMs + " ms"))) {
                            closeNow();
                        }
                    }, timeoutMs, TimeUnit.MILLISECONDS);
                }
            } catch (ConnectException e) {
                connectPromise = null;
                session = null;
                stream = null;
                promise.setFailure(e);
            }
        }

        void resumeWrite() {
            flush0();
        }
    }
}
