package io.agentbox.mux;

import io.agentbox.mux.frame.FrameEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The session's single writer: a priority lane for control frames (ACKs, window updates, pings,
 * go-away, RST) ahead of a data lane (Data and FIN, FIFO so each stream's bytes stay in order).
 * At most one transport write is outstanding; queued frames are coalesced into one write of at
 * most {@code maxWriteBatchBytes}. Thread-safe; never blocks.
 */
final class SessionWriter {

    private final MuxTransport transport;
    private final ByteBufAllocator alloc;
    private final int maxControlFrames;
    private final int maxQueuedDataBytes;
    private final int maxBatchBytes;
    private final int chunkSize;
    private final Consumer<Throwable> onFailure;
    private final AtomicInteger wip = new AtomicInteger();
    /** Bytes handed to the transport (frame headers included). */
    private final LongAdder written = new LongAdder();

    // guarded by this
    private final ArrayDeque<OutFrame> control = new ArrayDeque<>();
    private final ArrayDeque<OutFrame> data = new ArrayDeque<>();
    private final Set<Runnable> roomWaiters = new LinkedHashSet<>();
    private long queuedDataBytes;
    private boolean writing;
    private boolean closed;

    SessionWriter(MuxTransport transport, ByteBufAllocator alloc, MuxConfig config, Consumer<Throwable> onFailure) {
        this.transport = transport;
        this.alloc = alloc;
        this.maxControlFrames = config.maxControlFrames();
        this.maxQueuedDataBytes = config.maxQueuedDataBytes();
        this.maxBatchBytes = config.maxWriteBatchBytes();
        this.chunkSize = config.writeChunkSize();
        this.onFailure = onFailure;
    }

    /** Bytes handed to the transport so far, frame headers included. */
    long bytesWritten() {
        return written.sum();
    }

    /** Queues a control frame ahead of data. Returns false if the writer is closed; throws if the lane is full. */
    boolean sendControl(OutFrame frame) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (control.size() >= maxControlFrames) {
                throw new IllegalStateException("control frame queue full (" + maxControlFrames + ")");
            }
            control.add(frame);
        }
        pump();
        return true;
    }

    /** Queues a Data or FIN frame behind earlier data. Returns false (and releases it) if closed. */
    boolean sendData(OutFrame frame) {
        synchronized (this) {
            if (!closed) {
                data.add(frame);
                queuedDataBytes += frame.length();
                frame = null;
            }
        }
        if (frame != null) {
            frame.release();
            return false;
        }
        pump();
        return true;
    }

    /** True while queued Data is below the soft cap; writers check this before each frame. */
    synchronized boolean hasDataRoom() {
        return queuedDataBytes < maxQueuedDataBytes;
    }

    /**
     * Runs {@code wake} once (on the writer's thread) when there is room again; set semantics.
     * Waiters are woken oldest first, only as many as the free room has chunks for (see
     * {@link #wakeIfRoom}), so a backlog of many streams does not wake them all for every chunk.
     */
    void awaitDataRoom(Runnable wake) {
        boolean now;
        synchronized (this) {
            now = closed || queuedDataBytes < maxQueuedDataBytes;
            if (!now) {
                roomWaiters.add(wake);
            }
        }
        if (now) {
            wake.run();
        }
    }

    /**
     * Wakes room waiters if there is room; a woken stream calls this after its turn, so that one
     * that had nothing to send (no window, closed) passes the room on instead of stranding the rest.
     */
    void wakeIfRoom() {
        List<Runnable> wake;
        synchronized (this) {
            wake = takeWaiters();
        }
        if (wake != null) {
            wake.forEach(Runnable::run);
        }
    }

    // guarded by this; one waiter per chunk of free room, at least one, oldest first
    private List<Runnable> takeWaiters() {
        if (roomWaiters.isEmpty() || queuedDataBytes >= maxQueuedDataBytes) {
            return null;
        }
        long free = maxQueuedDataBytes - queuedDataBytes;
        int n = (int) Math.min(roomWaiters.size(), Math.max(1, (free + chunkSize - 1) / chunkSize));
        List<Runnable> out = new ArrayList<>(n);
        Iterator<Runnable> it = roomWaiters.iterator();
        while (out.size() < n) {
            out.add(it.next());
            it.remove();
        }
        return out;
    }

    /** Drops everything queued; later frames are refused. Room waiters are woken so they can fail. */
    void close() {
        List<OutFrame> dropped = new ArrayList<>();
        List<Runnable> wake;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            dropped.addAll(control);
            dropped.addAll(data);
            control.clear();
            data.clear();
            queuedDataBytes = 0;
            wake = new ArrayList<>(roomWaiters);
            roomWaiters.clear();
        }
        dropped.forEach(OutFrame::release);
        wake.forEach(Runnable::run);
    }

    /**
     * Drops queued frames, queues only {@code last} and refuses everything after it; used for a
     * final GoAway before the transport is closed.
     */
    void closeAfter(OutFrame last) {
        List<OutFrame> dropped = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            dropped.addAll(data);
            data.clear();
            queuedDataBytes = 0;
            control.add(last);
            closed = true;
        }
        dropped.forEach(OutFrame::release);
        pump();
    }

    private void pump() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            ByteBuf batch = null;
            List<Runnable> after = null;
            List<Runnable> wake = null;
            synchronized (this) {
                if (!writing && (!control.isEmpty() || !data.isEmpty())) {
                    after = new ArrayList<>(2);
                    batch = buildBatch(after);
                    writing = true;
                    wake = takeWaiters();
                }
            }
            if (wake != null) {
                wake.forEach(Runnable::run);
            }
            if (batch != null) {
                List<Runnable> callbacks = after;
                written.add(batch.readableBytes());
                transport.write(batch, failure -> onWritten(failure, callbacks));
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    // guarded by this; control frames first, then data, while the batch stays under the cap
    private ByteBuf buildBatch(List<Runnable> after) {
        List<OutFrame> taken = new ArrayList<>();
        int size = 0;
        while (!control.isEmpty() && (taken.isEmpty() || size + control.peek().wireSize() <= maxBatchBytes)) {
            OutFrame f = control.poll();
            size += f.wireSize();
            taken.add(f);
        }
        while (!data.isEmpty() && (taken.isEmpty() || size + data.peek().wireSize() <= maxBatchBytes)) {
            OutFrame f = data.poll();
            queuedDataBytes -= f.length();
            size += f.wireSize();
            taken.add(f);
        }
        ByteBuf out = alloc.directBuffer(size, size);
        for (OutFrame f : taken) {
            FrameEncoder.writeHeader(out, f.type(), f.flags(), f.streamId(), f.length());
            if (f.payload() != null) {
                out.writeBytes(f.payload(), f.payload().readerIndex(), f.payload().readableBytes());
                f.release();
            }
            if (f.onWritten() != null) {
                after.add(f.onWritten());
            }
        }
        return out;
    }

    private void onWritten(Throwable failure, List<Runnable> callbacks) {
        synchronized (this) {
            writing = false;
        }
        if (failure != null) {
            onFailure.accept(failure);
            return;
        }
        callbacks.forEach(Runnable::run);
        pump();
    }
}
