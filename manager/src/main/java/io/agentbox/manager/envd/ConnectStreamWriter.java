package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Writes one Connect server-streaming response (docs/e2b-wire.md#streams-and-envelopes): HTTP 200,
 * {@code application/connect+json}, message envelopes written (and flushed) as they are produced,
 * and a mandatory end-of-stream envelope last.
 *
 * <p>Writes never overlap: envelopes wait in a queue of at most {@code maxQueued} entries; each
 * entry may carry an {@code afterWrite} action, which callers use to request the next gRPC message
 * only when the previous one reached the socket (end-to-end backpressure). After the first
 * message, a {@code keepalive} message is sent whenever nothing was sent for the keepalive
 * interval (docs/e2b-wire.md#keepalives). A failed write (client gone) or a full queue runs {@code onAbort} once
 * and fails the request.
 */
final class ConnectStreamWriter {
    static final String CONTENT_TYPE = "application/connect+json";

    private record Item(ByteBuffer buf, boolean last, Runnable afterWrite) {}

    private final Response response;
    private final Callback done;
    private final int maxQueued;
    private final Runnable onAbort;
    private final ArrayDeque<Item> queue = new ArrayDeque<>();
    private boolean writing;
    private boolean started;
    private boolean ended;
    private boolean aborted;
    private long lastSentNanos = System.nanoTime();
    private ScheduledFuture<?> keepaliveTask;

    ConnectStreamWriter(Response response, Callback done, int maxQueued, Runnable onAbort) {
        this.response = response;
        this.done = done;
        this.maxQueued = maxQueued;
        this.onAbort = onAbort;
    }

    /** True once a message was queued, i.e. the HTTP status can no longer change. */
    synchronized boolean started() {
        return started;
    }

    /** Sends {@code message} (JSON) every {@code intervalSeconds} of silence (after the first message); 0 = never. */
    synchronized void keepalive(ScheduledExecutorService timer, long intervalSeconds, byte[] message) {
        if (intervalSeconds <= 0 || ended || aborted) {
            return;
        }
        long intervalNanos = TimeUnit.SECONDS.toNanos(intervalSeconds);
        long period = Math.max(100, TimeUnit.SECONDS.toMillis(intervalSeconds) / 4);
        keepaliveTask = timer.scheduleAtFixedRate(() -> {
            synchronized (this) {
                if (started && !ended && !aborted && queue.isEmpty() && System.nanoTime() - lastSentNanos >= intervalNanos) {
                    enqueue(new Item(ConnectEnvelope.frame(ConnectEnvelope.FLAG_MESSAGE, message), false, null));
                }
            }
        }, period, period, TimeUnit.MILLISECONDS);
    }

    /** Queues one message envelope holding {@code message} (JSON); {@code afterWrite} (may be null) runs once it was written. */
    void message(byte[] message, Runnable afterWrite) {
        ByteBuffer frame = ConnectEnvelope.frame(ConnectEnvelope.FLAG_MESSAGE, message);
        synchronized (this) {
            if (ended || aborted) {
                return;
            }
            started = true;
            enqueue(new Item(frame, false, afterWrite));
        }
    }

    /** Queues the end-of-stream envelope: {@code {}} or {@code {"error":{code,message}}}; completes the request once written. */
    void end(ConnectError error) {
        ObjectNode eos = Json.MAPPER.createObjectNode();
        if (error != null) {
            eos.set("error", error.toJson());
        }
        ByteBuffer frame = ConnectEnvelope.frame(ConnectEnvelope.FLAG_END_STREAM, Json.bytes(eos));
        synchronized (this) {
            if (ended || aborted) {
                return;
            }
            ended = true;
            started = true;
            cancelKeepalive();
            enqueue(new Item(frame, true, null));
        }
    }

    private void enqueue(Item item) {
        if (queue.size() >= maxQueued) {
            abort(new IllegalStateException("stream queue full (" + maxQueued + " envelopes)"));
            return;
        }
        if (!response.isCommitted()) {
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
        }
        queue.add(item);
        lastSentNanos = System.nanoTime();
        pump();
    }

    private void pump() {
        if (writing || aborted) {
            return;
        }
        Item item = queue.poll();
        if (item == null) {
            return;
        }
        writing = true;
        response.write(item.last, item.buf, new Callback() {
            @Override
            public void succeeded() {
                if (item.afterWrite != null) {
                    item.afterWrite.run();
                }
                if (item.last) {
                    done.succeeded();
                    return;
                }
                synchronized (ConnectStreamWriter.this) {
                    writing = false;
                    pump();
                }
            }

            @Override
            public void failed(Throwable x) {
                synchronized (ConnectStreamWriter.this) {
                    writing = false;
                    abort(x);
                }
            }
        });
    }

    private void abort(Throwable cause) {
        if (aborted) {
            return;
        }
        aborted = true;
        queue.clear();
        cancelKeepalive();
        try {
            onAbort.run();
        } finally {
            done.failed(cause);
        }
    }

    private void cancelKeepalive() {
        if (keepaliveTask != null) {
            keepaliveTask.cancel(false);
            keepaliveTask = null;
        }
    }
}
