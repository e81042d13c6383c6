package io.agentbox.mux.tools;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.jetty.MuxWebSockets;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;

/**
 * Baseline without the mux: sends {@code bytes} as binary messages over one plain WebSocket
 * to a message echo (the {@value MuxEchoServer#RAW_PATH} path of {@link MuxEchoServer}) and
 * reads them back. The next message is sent once the previous one is written, so the socket stays
 * full; the echo reads the next message only after its echo is written (back-pressure).
 */
public final class RawWebSocketBench {

    private RawWebSocketBench() {
    }

    /**
     * Runs the baseline with {@code library}'s WebSocket client (Jetty with the mux tools' settings,
     * {@link MuxWebSockets#configure}; or Netty). Fails if the echo returns a different number of
     * bytes, the socket closes, or nothing moves for {@code timeout}.
     */
    public static MuxBenchResult.Throughput run(URI echoUri, long bytes, int messageSize, Duration timeout,
            WebSocketLibrary library) throws IOException, InterruptedException {
        if (bytes <= 0 || messageSize <= 0) {
            throw new IllegalArgumentException("bytes and messageSize must be positive");
        }
        if (library == WebSocketLibrary.NETTY) {
            return NettyRawWebSocketBench.run(echoUri, bytes, messageSize, timeout);
        }
        WebSocketClient client = new WebSocketClient();
        MuxWebSockets.configure(client, MuxConfig.defaults());
        client.setConnectTimeout(timeout.toMillis());
        Counter counter = new Counter(bytes);
        try {
            client.start();
            Session ws = client.connect(counter, echoUri).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            byte[] chunk = new byte[messageSize];
            for (int i = 0; i < chunk.length; i++) {
                chunk[i] = (byte) i;
            }
            long start = System.nanoTime();
            new Sender(ws, chunk, bytes, counter.done).next();
            awaitEcho(counter.done, counter.received, bytes, timeout);
            long elapsed = System.nanoTime() - start;
            ws.close();
            return new MuxBenchResult.Throughput(1, bytes, counter.received.get(), elapsed);
        } catch (ExecutionException e) {
            throw new IOException("raw WebSocket bench against " + echoUri + " failed: " + MuxBench.reason(e), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("cannot connect to " + echoUri + " within " + timeout.toMillis() + " ms");
        } catch (IOException | InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("raw WebSocket bench against " + echoUri + " failed: " + MuxBench.reason(e), e);
        } finally {
            try {
                client.stop();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    /** Waits for {@code done}, failing if {@code received} stays still for {@code timeout}. */
    static void awaitEcho(CompletableFuture<Void> done, AtomicLong received, long bytes, Duration timeout)
            throws IOException, InterruptedException {
        try {
            MuxBench.awaitProgress(done, received::get, timeout, now -> { });
        } catch (IOException e) {
            throw new IOException("raw WebSocket echo " + e.getMessage() + " at " + received.get() + " of " + bytes + " bytes",
                    e.getCause());
        }
    }

    /** Waits up to {@code timeout} for {@code f}; failures become one-line IOExceptions naming {@code what}. */
    static void await(CompletableFuture<Void> f, Duration timeout, String what) throws IOException, InterruptedException {
        try {
            f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IOException("cannot " + what + " within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw new IOException("cannot " + what + ": " + MuxBench.reason(e), e.getCause());
        }
    }

    /** Sends one message at a time, the next from the previous one's completion. */
    private static final class Sender {
        private final Session ws;
        private final byte[] chunk;
        private final CompletableFuture<Void> failure;
        private final AtomicInteger wip = new AtomicInteger();
        private long remaining;

        Sender(Session ws, byte[] chunk, long bytes, CompletableFuture<Void> failure) {
            this.ws = ws;
            this.chunk = chunk;
            this.remaining = bytes;
            this.failure = failure;
        }

        /** Trampolined: a send that completes inline does not recurse, and one send is in flight at a time. */
        void next() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            do {
                if (remaining > 0) {
                    int n = (int) Math.min(chunk.length, remaining);
                    remaining -= n;
                    ws.sendBinary(ByteBuffer.wrap(chunk, 0, n), Callback.from(this::next, failure::completeExceptionally));
                }
            } while (wip.decrementAndGet() != 0);
        }
    }

    /** Public only because Jetty invokes listener methods reflectively; not an API. */
    public static final class Counter implements Session.Listener.AutoDemanding {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final AtomicLong received = new AtomicLong();
        private final long expected;

        private Counter(long expected) {
            this.expected = expected;
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            long got = received.addAndGet(payload.remaining());
            callback.succeed();
            if (got == expected) {
                done.complete(null);
            } else if (got > expected) {
                done.completeExceptionally(new IOException("echo returned " + got + " bytes, sent " + expected));
            }
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason) {
            done.completeExceptionally(new IOException("WebSocket closed: " + statusCode + " " + reason));
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            done.completeExceptionally(cause);
        }
    }
}
