package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A server-sent-events response (text/event-stream): {@code event: <name>} and one
 * {@code data: <json>} line per event. Writes go out one at a time in order; each event's
 * {@code onWritten} runs once Jetty has taken its bytes, which is how a producer paces itself (the
 * command relay asks the worker for the next message only then). A comment line keeps the
 * connection alive every {@value #KEEPALIVE_SECONDS} s of silence, so a client that went away is
 * noticed (its write fails) and the connection's idle timeout does not end a quiet stream.
 *
 * <p>Limits: at most {@value #MAX_QUEUED} events wait; a producer that ignores the pacing and
 * queues more ends the stream. {@code onGone} runs at most once, when the client went away or the
 * stream was cut for overflow; {@link #end} completes the response exactly once.
 */
final class SseStream {
    static final long KEEPALIVE_SECONDS = 15;
    static final int MAX_QUEUED = 256;
    private static final byte[] KEEPALIVE = ": keepalive\n\n".getBytes(StandardCharsets.US_ASCII);

    private record Frame(byte[] bytes, Runnable onWritten, boolean last) {}

    private final Response response;
    private final Callback callback;
    private final Runnable onGone;
    private final Deque<Frame> queue = new ArrayDeque<>();
    private boolean writing;
    private boolean done;
    private final java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
    private ScheduledFuture<?> keepalive;

    /** Opens the stream: status 200 and SSE headers are sent with the first write. */
    SseStream(Request request, Response response, Callback callback, ScheduledExecutorService timer, Runnable onGone) {
        this.response = response;
        this.callback = callback;
        this.onGone = onGone;
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        response.getHeaders().put("X-Accel-Buffering", "no"); // proxies in front must not buffer the stream
        request.addIdleTimeoutListener(t -> false); // silence is normal; keepalives find dead clients
        this.keepalive = timer.scheduleWithFixedDelay(this::keepalive, KEEPALIVE_SECONDS, KEEPALIVE_SECONDS,
                TimeUnit.SECONDS);
    }

    /** Queues event {@code name} with {@code data}; {@code onWritten} (may be null) runs once it is written. */
    void event(String name, JsonNode data, Runnable onWritten) {
        enqueue(new Frame(frame(name, data), onWritten, false));
    }

    /** Queues a last event (none when {@code name} is null) and completes the response after it. */
    void end(String name, JsonNode data) {
        end(name, data, null);
    }

    /** As {@link #end(String, JsonNode)}; {@code onWritten} (may be null) runs once the last event is written. */
    void end(String name, JsonNode data, Runnable onWritten) {
        enqueue(new Frame(name == null ? new byte[0] : frame(name, data), onWritten, true));
    }

    /** Sends the status and headers now (with a comment line), for a stream whose first event may be far off. */
    void open() {
        enqueue(new Frame(KEEPALIVE, null, false));
    }

    /** Cuts the connection unless the response completed (a client that stopped reading); {@code onGone} runs. */
    void abort(String why) {
        gone(new java.io.IOException(why));
    }

    /**
     * Gives the response back before anything was written (to answer an error instead): true when
     * nothing was queued or written, and then this stream never writes.
     */
    synchronized boolean abandon() {
        if (done || writing || !queue.isEmpty() || response.isCommitted()) {
            return false;
        }
        done = true;
        keepalive.cancel(false);
        return true;
    }

    static byte[] frame(String name, JsonNode data) {
        // Jackson escapes line breaks inside strings, so the JSON is one line
        return ("event: " + name + "\ndata: " + new String(io.agentbox.manager.http.Json.bytes(data), StandardCharsets.UTF_8) + "\n\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    private void keepalive() {
        synchronized (this) {
            if (done || writing || !queue.isEmpty()) {
                return;
            }
        }
        enqueue(new Frame(KEEPALIVE, null, false));
    }

    private void enqueue(Frame f) {
        boolean overflow = false;
        synchronized (this) {
            if (done) {
                return;
            }
            if (queue.size() >= MAX_QUEUED) {
                overflow = true;
                done = true;
            } else {
                queue.add(f);
                if (f.last) {
                    done = true; // nothing after the last frame
                }
                if (writing) {
                    return;
                }
                writing = true;
            }
        }
        if (overflow) {
            gone(new IllegalStateException("more than " + MAX_QUEUED + " events queued"));
            return;
        }
        pump();
    }

    private void pump() {
        Frame f;
        synchronized (this) {
            f = queue.poll();
            if (f == null) {
                writing = false;
                return;
            }
        }
        response.write(f.last, ByteBuffer.wrap(f.bytes), new Callback() {
            @Override
            public void succeeded() {
                if (f.onWritten != null) {
                    f.onWritten.run();
                }
                if (f.last) {
                    keepalive.cancel(false);
                    if (finished.compareAndSet(false, true)) {
                        callback.succeeded();
                    }
                    return;
                }
                pump();
            }

            @Override
            public void failed(Throwable x) {
                gone(x);
            }
        });
    }

    private void gone(Throwable why) {
        synchronized (this) {
            done = true;
            queue.clear();
        }
        keepalive.cancel(false);
        if (finished.compareAndSet(false, true)) {
            callback.failed(why);
            onGone.run();
        }
    }
}
