package io.agentbox.mux.tools;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamChannel;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.eclipse.jetty.websocket.client.WebSocketClient;

/**
 * Diagnostic client for the mux tunnel (the "iperf client"). Dials {@code ws://host:port/mux} as
 * the yamux CLIENT (odd stream ids) and measures against an echo peer such as
 * {@link MuxEchoServer} or a hashicorp/yamux echo server behind a gorilla WebSocket:
 *
 * <ul>
 *   <li>{@link #throughput}: N concurrent streams each send B bytes (with back-pressure), then
 *       FIN, and read the echo until the peer's FIN; every stream must get exactly B bytes back.
 *   <li>{@link #latency}: sequential samples of open stream + write 1 byte + read the echo.
 * </ul>
 *
 * The peer must echo every stream and answer our FIN with its own after the echo (Go: {@code
 * io.Copy(s, s); s.Close()}). One instance holds one session; not thread-safe.
 */
public final class MuxBench implements AutoCloseable {

    /** Called about once a second during {@link #throughput}. */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (echoed, total, elapsedNanos) -> { };

        void update(long bytesEchoed, long bytesTotal, long elapsedNanos);
    }

    private static final int CHUNK = 64 * 1024;
    /** Opens in flight at once, below the default maxPendingOpens (256) on either side. */
    private static final int OPEN_BATCH = 128;

    private final URI target;
    /** The Jetty client, or {@code null} on Netty (whose shared event loops live with the JVM). */
    private final WebSocketClient client;
    private final MuxSession session;
    private final Duration timeout;
    private final ByteBuf payload;

    private MuxBench(URI target, WebSocketClient client, MuxSession session, Duration timeout) {
        this.target = target;
        this.client = client;
        this.session = session;
        this.timeout = timeout;
        byte[] pattern = new byte[CHUNK];
        for (int i = 0; i < pattern.length; i++) {
            pattern[i] = (byte) (i * 31 + 7);
        }
        // the session copies payloads into its transport batches, so a heap source costs nothing extra
        this.payload = Unpooled.wrappedBuffer(pattern);
    }

    /**
     * Dials {@code target} and starts a yamux CLIENT session over the WebSocket.
     *
     * @param timeout connect timeout; also how long a stream open, an echo, or a stalled
     *     throughput run may take before the run fails
     * @throws IOException one readable line, e.g. "cannot connect to ws://h:1/mux: Connection refused"
     */
    public static MuxBench connect(URI target, MuxConfig config, Duration timeout) throws IOException {
        return connect(target, config, timeout, WebSocketLibrary.NETTY);
    }

    /** As {@link #connect(URI, MuxConfig, Duration)} with the given WebSocket client implementation. */
    public static MuxBench connect(URI target, MuxConfig config, Duration timeout, WebSocketLibrary library)
            throws IOException {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(library, "library");
        String scheme = target.getScheme() == null ? "" : target.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("ws") && !scheme.equals("wss")) {
            throw new IllegalArgumentException("URL must start with ws:// or wss://: " + target);
        }
        WebSocketClient client = null;
        try {
            MuxSession s;
            if (library == WebSocketLibrary.NETTY) {
                s = NettyWebSocketClient.connect(target, null, MuxRole.CLIENT, config, null, timeout)
                        .get(2 * timeout.toMillis(), TimeUnit.MILLISECONDS);
            } else {
                client = new WebSocketClient();
                MuxWebSockets.configure(client, config);
                client.setConnectTimeout(timeout.toMillis());
                client.start();
                MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.CLIENT, config, null);
                client.connect(ep, target).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                s = ep.session().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            return new MuxBench(target, client, s, timeout);
        } catch (Exception e) {
            stopQuietly(client);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cannot connect to " + target + ": " + reason(e), e);
        }
    }

    /** The yamux session, e.g. to open idle streams for a memory measurement. */
    public MuxSession session() {
        return session;
    }

    public URI target() {
        return target;
    }

    /** Throughput then latency: the {@code agentbox mux bench} run. {@code rttSamples} 0 skips latency. */
    public MuxBenchResult run(int streams, long bytesPerStream, int warmup, int rttSamples, Progress progress)
            throws IOException, InterruptedException {
        MuxBenchResult.Throughput t = throughput(streams, bytesPerStream, progress);
        MuxBenchResult.Latency l = rttSamples > 0 ? latency(warmup, rttSamples) : null;
        return new MuxBenchResult(target, t, l);
    }

    /**
     * Opens {@code streams} streams, then (clock starts) each writes {@code bytesPerStream}
     * bytes and FIN, reading the echo until the peer's FIN (clock stops when all have). Fails if a
     * stream gets a different number of bytes back, is reset, or nothing moves for the timeout.
     */
    public MuxBenchResult.Throughput throughput(int streams, long bytesPerStream, Progress progress)
            throws IOException, InterruptedException {
        if (streams <= 0 || bytesPerStream <= 0) {
            throw new IllegalArgumentException("streams and bytesPerStream must be positive");
        }
        Progress p = progress == null ? Progress.NONE : progress;
        List<Channel> channels = openStreams(streams);
        AtomicLong echoed = new AtomicLong();
        List<CompletableFuture<Void>> done = new ArrayList<>(streams);
        List<EchoCounter> counters = new ArrayList<>(streams);
        for (Channel ch : channels) {
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            EchoCounter c = new EchoCounter(payload, bytesPerStream, echoed);
            counters.add(c);
            done.add(c.done);
            ch.pipeline().addLast(c);
        }
        long start = System.nanoTime();
        for (int i = 0; i < channels.size(); i++) {
            Channel ch = channels.get(i);
            EchoCounter c = counters.get(i);
            ch.eventLoop().execute(c::start);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(done.toArray(CompletableFuture[]::new));
        long total = (long) streams * bytesPerStream;
        try {
            awaitProgress(all, echoed::get, timeout, now -> p.update(echoed.get(), total, now - start));
        } catch (IOException e) {
            channels.forEach(Channel::close);
            throw new IOException("throughput run " + e.getMessage() + " (" + echoed.get() + " of " + total + " echoed)", e.getCause());
        }
        long elapsed = System.nanoTime() - start;
        p.update(echoed.get(), total, elapsed);
        return new MuxBenchResult.Throughput(streams, bytesPerStream, echoed.get(), elapsed);
    }

    /**
     * {@code warmup} unrecorded then {@code samples} recorded round trips, one at a time: open a
     * stream, write 1 byte, read the echoed byte, close the stream. Each sample starts from the
     * previous one's completion callback (on the session's event loop), so the figures are the
     * mux's round trips, not thread wake-ups of the caller.
     */
    public MuxBenchResult.Latency latency(int warmup, int samples) throws IOException, InterruptedException {
        if (warmup < 0 || samples <= 0) {
            throw new IllegalArgumentException("warmup must be >= 0 and samples positive");
        }
        long[] rtt = new long[samples];
        long[] open = new long[samples];
        AtomicLong done = new AtomicLong();
        CompletableFuture<Void> all = new CompletableFuture<>();
        sample(-warmup, samples, rtt, open, done, all);
        try {
            awaitProgress(all, done::get, timeout, now -> { });
        } catch (IOException e) {
            all.cancel(false);
            throw new IOException("latency run " + e.getMessage() + " after " + done.get() + " samples", e.getCause());
        }
        return MuxBenchResult.Latency.of(rtt, open);
    }

    /** One open + echo; the next sample starts from its completion. Negative {@code i}: warm-up. */
    private void sample(int i, int samples, long[] rtt, long[] open, AtomicLong done, CompletableFuture<Void> all) {
        if (all.isDone()) {
            return;
        }
        byte b = (byte) i;
        long t0 = System.nanoTime();
        session.openStream().whenComplete((ch, openError) -> {
            if (openError != null) {
                all.completeExceptionally(new IOException("stream open failed: " + reason(openError), openError));
                return;
            }
            long t1 = System.nanoTime();
            CompletableFuture<Byte> got = new CompletableFuture<>();
            ch.pipeline().addLast(new OneByte(got));
            ch.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {b}));
            got.whenComplete((echo, echoError) -> {
                long t2 = System.nanoTime();
                ch.close();
                if (echoError != null || echo != b) {
                    all.completeExceptionally(echoError != null ? new IOException("1-byte echo failed: " + reason(echoError), echoError)
                            : new IOException("echo mismatch: sent " + b + ", got " + echo));
                    return;
                }
                if (i >= 0) {
                    rtt[i] = t2 - t0;
                    open[i] = t1 - t0;
                }
                done.incrementAndGet();
                if (i + 1 < samples) {
                    sample(i + 1, samples, rtt, open, done, all);
                } else {
                    all.complete(null);
                }
            });
        });
    }

    /**
     * Opens {@code n} streams (at most {@value #OPEN_BATCH} awaiting their ACK at once) and
     * returns their channels, active and without handlers; the caller closes them.
     */
    public List<Channel> openStreams(int n) throws IOException, InterruptedException {
        List<Channel> out = new ArrayList<>(n);
        try {
            for (int from = 0; from < n; from += OPEN_BATCH) {
                int to = Math.min(n, from + OPEN_BATCH);
                List<CompletableFuture<Channel>> batch = new ArrayList<>(to - from);
                for (int i = from; i < to; i++) {
                    batch.add(session.openStream());
                }
                for (CompletableFuture<Channel> f : batch) {
                    out.add(await(f, "stream open"));
                }
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            out.forEach(Channel::close);
            throw e;
        }
        return out;
    }

    @Override
    public void close() {
        session.close();
        try {
            session.closeFuture().get(5, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // stopping the client below ends it anyway
        }
        stopQuietly(client);
        payload.release();
    }

    private <T> T await(CompletableFuture<T> f, String what) throws IOException, InterruptedException {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new IOException(what + " timed out after " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw new IOException(what + " failed: " + reason(e), e.getCause());
        }
    }

    private static void stopQuietly(WebSocketClient client) {
        if (client == null) {
            return;
        }
        try {
            client.stop();
        } catch (Exception ignored) {
            // best effort
        }
    }

    /**
     * Waits for {@code done}, polling once a second: fails when {@code progress} has not moved for
     * {@code stall}. Failures are IOExceptions: "stalled: nothing moved for N s", or "failed: reason".
     */
    static void awaitProgress(CompletableFuture<?> done, LongSupplier progress, Duration stall,
            LongConsumer onTick) throws IOException, InterruptedException {
        long last = -1;
        long lastMove = System.nanoTime();
        while (true) {
            try {
                done.get(1, TimeUnit.SECONDS);
                return;
            } catch (TimeoutException tick) {
                long now = System.nanoTime();
                onTick.accept(now);
                long v = progress.getAsLong();
                if (v != last) {
                    last = v;
                    lastMove = now;
                } else if (now - lastMove > stall.toNanos()) {
                    throw new IOException("stalled: nothing moved for " + stall.toSeconds() + " s");
                }
            } catch (ExecutionException e) {
                throw new IOException("failed: " + reason(e), e.getCause());
            }
        }
    }

    /** The innermost message, e.g. "Connection refused", or the exception's class name. */
    static String reason(Throwable e) {
        Throwable t = e;
        while ((t instanceof ExecutionException || t instanceof CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String top = t.getMessage();
        String bottom = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        if (root == t || top == null || top.contains(bottom)) {
            return top != null ? top : bottom;
        }
        return top + ": " + bottom;
    }

    /** Writes its quota with back-pressure, then FIN; counts the echo; completes on close. */
    private static final class EchoCounter extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final ByteBuf payload;
        private final long quota;
        private final AtomicLong echoedTotal;
        private ChannelHandlerContext ctx;
        private long sent;
        private long received;
        private boolean finished;

        EchoCounter(ByteBuf payload, long quota, AtomicLong echoedTotal) {
            this.payload = payload;
            this.quota = quota;
            this.echoedTotal = echoedTotal;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        void start() {
            pump();
        }

        private void pump() {
            Channel ch = ctx.channel();
            if (finished || !ch.isActive()) {
                return;
            }
            while (sent < quota && ch.isWritable()) {
                int n = (int) Math.min(payload.capacity(), quota - sent);
                ctx.write(payload.retainedSlice(0, n));
                sent += n;
            }
            ctx.flush();
            if (sent == quota && !finished) {
                finished = true;
                ((MuxStreamChannel) ch).shutdownOutput();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf b) {
                int n = b.readableBytes();
                received += n;
                echoedTotal.addAndGet(n);
            }
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            MuxStreamChannel ch = (MuxStreamChannel) ctx.channel();
            if (received == quota && ch.isInputShutdown()) {
                done.complete(null);
            } else {
                done.completeExceptionally(new IOException("stream " + ch.streamId() + " ended after "
                        + received + " of " + quota + " echoed bytes"
                        + (ch.isInputShutdown() ? "" : " (reset or session lost)")));
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }

    /** Completes with the first byte read. */
    private static final class OneByte extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<Byte> got;

        OneByte(CompletableFuture<Byte> got) {
            this.got = got;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof ByteBuf b && b.isReadable()) {
                    got.complete(b.getByte(b.readerIndex()));
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            got.completeExceptionally(new IOException("stream closed before the echo"));
            ctx.fireChannelInactive();
        }
    }
}
