package io.agentbox.mux;

import io.agentbox.mux.frame.YamuxFrames;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.Objects;

/**
 * Immutable settings of one {@link MuxSession}; validated by {@link Builder#build()}. Defaults
 * follow hashicorp/yamux {@code DefaultConfig} where the concept exists.
 */
public final class MuxConfig {

    private static final MuxConfig DEFAULTS = builder().build();

    private final int initialStreamWindow;
    private final int acceptBacklog;
    private final int maxPendingOpens;
    private final int writeChunkSize;
    private final int maxQueuedDataBytes;
    private final int maxControlFrames;
    private final int maxWriteBatchBytes;
    private final Duration keepAliveInterval;
    private final Duration keepAliveTimeout;
    private final EventLoopGroup eventLoopGroup;
    private final Duration streamCloseTimeout;
    private final long maxSessionReceiveBuffer;
    private final int maxPendingPingReplies;
    private final Duration streamWriteTimeout;

    private MuxConfig(Builder b) {
        this.maxSessionReceiveBuffer = b.maxSessionReceiveBuffer;
        this.maxPendingPingReplies = b.maxPendingPingReplies;
        this.streamWriteTimeout = b.streamWriteTimeout;
        this.streamCloseTimeout = b.streamCloseTimeout;
        this.initialStreamWindow = b.initialStreamWindow;
        this.acceptBacklog = b.acceptBacklog;
        this.maxPendingOpens = b.maxPendingOpens;
        this.writeChunkSize = b.writeChunkSize;
        this.maxQueuedDataBytes = b.maxQueuedDataBytes;
        this.maxControlFrames = b.maxControlFrames;
        this.maxWriteBatchBytes = b.maxWriteBatchBytes;
        this.keepAliveInterval = b.keepAliveInterval;
        this.keepAliveTimeout = b.keepAliveTimeout;
        this.eventLoopGroup = b.eventLoopGroup;
    }

    /** 256 KiB windows, backlog 256, 32 KiB write chunks, keepalive: ping after 5 s of silence, end after 10 s. */
    public static MuxConfig defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding every setting of this config, to derive a variant (e.g. another event loop). */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.initialStreamWindow = initialStreamWindow;
        b.acceptBacklog = acceptBacklog;
        b.maxPendingOpens = maxPendingOpens;
        b.writeChunkSize = writeChunkSize;
        b.maxQueuedDataBytes = maxQueuedDataBytes;
        b.maxControlFrames = maxControlFrames;
        b.maxWriteBatchBytes = maxWriteBatchBytes;
        b.keepAliveInterval = keepAliveInterval;
        b.keepAliveTimeout = keepAliveTimeout;
        b.eventLoopGroup = eventLoopGroup;
        b.streamCloseTimeout = streamCloseTimeout;
        b.maxSessionReceiveBuffer = maxSessionReceiveBuffer;
        b.maxPendingPingReplies = maxPendingPingReplies;
        b.streamWriteTimeout = streamWriteTimeout;
        return b;
    }

    /** Receive window per stream in bytes (Go's MaxStreamWindowSize); the surplus over 256 KiB is granted on SYN/ACK. */
    public int initialStreamWindow() {
        return initialStreamWindow;
    }

    /** Peer-opened streams that may wait for acceptance; more are answered with RST. */
    public int acceptBacklog() {
        return acceptBacklog;
    }

    /** Own SYNs that may wait for their ACK; {@link MuxSession#openStream()} fails beyond this. */
    public int maxPendingOpens() {
        return maxPendingOpens;
    }

    /** Largest Data frame payload we send, in bytes, so one stream cannot monopolise the transport. */
    public int writeChunkSize() {
        return writeChunkSize;
    }

    /** Soft cap in bytes on Data queued for the transport across all streams; writers pause above it. */
    public int maxQueuedDataBytes() {
        return maxQueuedDataBytes;
    }

    /** Cap on queued control frames (ACKs, window updates, pings); overflow ends the session. */
    public int maxControlFrames() {
        return maxControlFrames;
    }

    /** Largest single transport write (one WebSocket message) in bytes. */
    public int maxWriteBatchBytes() {
        return maxWriteBatchBytes;
    }

    /**
     * How long the peer may be quiet (nothing received) before we send a keepalive ping; default
     * 5 s. {@link Duration#ZERO} disables keepalive (no pings, no timeout).
     */
    public Duration keepAliveInterval() {
        return keepAliveInterval;
    }

    /**
     * How long the peer may be quiet before the session ends (GoAway(0) sent, then the transport
     * closed); default 10 s, so a dead or frozen peer is noticed within about 10 s. Any inbound
     * traffic counts, not only ping ACKs, so a busy link is never cut. Must exceed the interval.
     */
    public Duration keepAliveTimeout() {
        return keepAliveTimeout;
    }

    /**
     * After we closed a stream, how long the peer may take to send its FIN before we send RST and
     * forget the stream (Go's StreamCloseTimeout, 5 min); {@link Duration#ZERO} waits forever.
     */
    public Duration streamCloseTimeout() {
        return streamCloseTimeout;
    }

    /**
     * How long a stream's pending writes may wait for send window the peer does not grant (no
     * WindowUpdate at all in that time) before they fail with an {@link java.io.IOException} and
     * the stream is reset (RST sent, channel closed). Guards against a peer that half-closed (or
     * stalled) and stops reading but never resets the stream, as Go's yamux may. Default 30 s;
     * {@link Duration#ZERO} waits forever. A slow reader that grants some window in time is fine.
     */
    public Duration streamWriteTimeout() {
        return streamWriteTimeout;
    }

    /**
     * Cap in bytes on peer Data the session holds at once across all streams: received (or being
     * received) but not yet delivered to a stream's consumer nor dropped. Per-stream windows bound
     * each stream, this bounds their sum (window x streams could otherwise reach gigabytes). A Data
     * frame that would push the total past the cap is not buffered: its payload is skipped and its
     * stream is reset (RST sent, channel closed with an {@link java.io.IOException}); the session and
     * the other streams continue. Default 64 MiB; must be at least {@link #initialStreamWindow()}.
     */
    public long maxSessionReceiveBuffer() {
        return maxSessionReceiveBuffer;
    }

    /**
     * Ping replies (Ping ACKs) that may wait in the control lane for the transport; a peer whose
     * Ping SYNs arrive faster than we can write the replies past this count is flooding us: the
     * session answers GoAway(1, protocol error) and ends. Default 256 (our own {@code ping()}
     * keeps at most 64 outstanding, Go's keepalive one).
     */
    public int maxPendingPingReplies() {
        return maxPendingPingReplies;
    }

    /**
     * Largest WebSocket frame or message a transport adapter should accept from the peer, in
     * bytes: at least 16 MiB and at least twice the stream window plus a header, because a Go
     * peer may send a whole window as one message.
     */
    public long maxTransportMessageBytes() {
        return Math.max(16L * 1024 * 1024, 2L * initialStreamWindow + 64);
    }

    /** Event loops for stream channels and timers; {@code null} means a shared daemon group. */
    public EventLoopGroup eventLoopGroup() {
        return eventLoopGroup;
    }

    /** Mutable builder; every setter checks its argument, {@link #build()} checks combinations. */
    public static final class Builder {
        private int initialStreamWindow = YamuxFrames.INITIAL_STREAM_WINDOW;
        private int acceptBacklog = 256;
        private int maxPendingOpens = 256;
        private int writeChunkSize = 32 * 1024;
        private int maxQueuedDataBytes = 1024 * 1024;
        private int maxControlFrames = 8192;
        private int maxWriteBatchBytes = 256 * 1024;
        private Duration keepAliveInterval = Duration.ofSeconds(5);
        private Duration keepAliveTimeout = Duration.ofSeconds(10);
        private EventLoopGroup eventLoopGroup;
        private Duration streamCloseTimeout = Duration.ofMinutes(5);
        private long maxSessionReceiveBuffer = 64L * 1024 * 1024;
        private int maxPendingPingReplies = 256;
        private Duration streamWriteTimeout = Duration.ofSeconds(30);

        private Builder() {
        }

        /** {@link Duration#ZERO} lets writes wait for window forever; see {@link MuxConfig#streamWriteTimeout()}. */
        public Builder streamWriteTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "streamWriteTimeout");
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("streamWriteTimeout must not be negative");
            }
            this.streamWriteTimeout = timeout;
            return this;
        }

        /** Bytes of undelivered inbound Data per session, at least the stream window; see {@link MuxConfig#maxSessionReceiveBuffer()}. */
        public Builder maxSessionReceiveBuffer(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxSessionReceiveBuffer must be positive: " + bytes);
            }
            this.maxSessionReceiveBuffer = bytes;
            return this;
        }

        /** Ping ACKs queued but not yet written; see {@link MuxConfig#maxPendingPingReplies()}. */
        public Builder maxPendingPingReplies(int replies) {
            this.maxPendingPingReplies = positive(replies, "maxPendingPingReplies");
            return this;
        }

        /** Bytes, at least 256 KiB (yamux initial window; Go's VerifyConfig rule). */
        public Builder initialStreamWindow(int bytes) {
            if (bytes < YamuxFrames.INITIAL_STREAM_WINDOW) {
                throw new IllegalArgumentException("initialStreamWindow must be >= 262144: " + bytes);
            }
            this.initialStreamWindow = bytes;
            return this;
        }

        public Builder acceptBacklog(int streams) {
            this.acceptBacklog = positive(streams, "acceptBacklog");
            return this;
        }

        public Builder maxPendingOpens(int streams) {
            this.maxPendingOpens = positive(streams, "maxPendingOpens");
            return this;
        }

        public Builder writeChunkSize(int bytes) {
            this.writeChunkSize = positive(bytes, "writeChunkSize");
            return this;
        }

        public Builder maxQueuedDataBytes(int bytes) {
            this.maxQueuedDataBytes = positive(bytes, "maxQueuedDataBytes");
            return this;
        }

        public Builder maxControlFrames(int frames) {
            this.maxControlFrames = positive(frames, "maxControlFrames");
            return this;
        }

        public Builder maxWriteBatchBytes(int bytes) {
            this.maxWriteBatchBytes = positive(bytes, "maxWriteBatchBytes");
            return this;
        }

        /** {@link Duration#ZERO} waits for the peer's FIN forever. */
        public Builder streamCloseTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "streamCloseTimeout");
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("streamCloseTimeout must not be negative");
            }
            this.streamCloseTimeout = timeout;
            return this;
        }

        /** {@link Duration#ZERO} disables keepalive pings. */
        public Builder keepAliveInterval(Duration interval) {
            Objects.requireNonNull(interval, "keepAliveInterval");
            if (interval.isNegative()) {
                throw new IllegalArgumentException("keepAliveInterval must not be negative");
            }
            this.keepAliveInterval = interval;
            return this;
        }

        public Builder keepAliveTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "keepAliveTimeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("keepAliveTimeout must be positive");
            }
            this.keepAliveTimeout = timeout;
            return this;
        }

        /** Event loops for stream channels; {@code null} (default) uses {@link MuxEventLoops#shared()}. */
        public Builder eventLoopGroup(EventLoopGroup group) {
            this.eventLoopGroup = group;
            return this;
        }

        public MuxConfig build() {
            if (!keepAliveInterval.isZero() && keepAliveTimeout.compareTo(keepAliveInterval) <= 0) {
                throw new IllegalArgumentException("keepAliveTimeout must exceed keepAliveInterval");
            }
            if (maxSessionReceiveBuffer < initialStreamWindow) {
                throw new IllegalArgumentException("maxSessionReceiveBuffer must be >= initialStreamWindow");
            }
            if (writeChunkSize > initialStreamWindow) {
                throw new IllegalArgumentException("writeChunkSize must not exceed initialStreamWindow");
            }
            if (maxWriteBatchBytes < writeChunkSize + YamuxFrames.HEADER_LENGTH) {
                throw new IllegalArgumentException("maxWriteBatchBytes must hold one full chunk and its header");
            }
            return new MuxConfig(this);
        }

        private static int positive(int value, String name) {
            if (value <= 0) {
                throw new IllegalArgumentException(name + " must be positive: " + value);
            }
            return value;
        }
    }
}
