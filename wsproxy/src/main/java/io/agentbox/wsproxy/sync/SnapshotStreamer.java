package io.agentbox.wsproxy.sync;

import io.grpc.stub.ServerCallStreamObserver;
import java.util.function.BiFunction;

/**
 * Pushes the latest snapshot of a {@link WatchSource} down one server stream, coalescing changes:
 * a slow worker never blocks the hub or other workers, and never loses a change, because what it
 * gets next is always the newest full snapshot (a snapshot is authoritative on the worker).
 * Sends only while the stream is ready (gRPC flow control), so memory per watcher is one message.
 */
final class SnapshotStreamer<T, E> {
    private final WatchSource<T> source;
    private final ServerCallStreamObserver<E> stream;
    private final BiFunction<Long, java.util.List<T>, E> toEvent;
    private long sentVersion;
    private boolean closed;

    SnapshotStreamer(WatchSource<T> source, ServerCallStreamObserver<E> stream, long knownVersion,
                     BiFunction<Long, java.util.List<T>, E> toEvent) {
        this.source = source;
        this.stream = stream;
        this.toEvent = toEvent;
        // A worker that already applied the current version gets nothing until the next change.
        this.sentVersion = knownVersion;
    }

    void start() {
        stream.setOnCancelHandler(() -> {
            synchronized (this) {
                closed = true;
            }
        });
        stream.setOnReadyHandler(this::drain);
        source.addListener(this::drain);
        drain();
    }

    synchronized void drain() {
        if (closed || !stream.isReady()) {
            return;
        }
        WatchSource.Snapshot<T> snap = source.snapshot();
        if (snap.resourceVersion() == sentVersion) {
            return;
        }
        sentVersion = snap.resourceVersion();
        try {
            stream.onNext(toEvent.apply(snap.resourceVersion(), snap.items()));
        } catch (RuntimeException e) {
            closed = true; // cancelled concurrently
        }
    }
}
