package io.agentbox.wsproxy.sync;

import io.grpc.stub.ServerCallStreamObserver;
import java.util.List;
import java.util.function.Predicate;

/**
 * Streams one watch of a {@link WatchCache} down a gRPC server stream: a snapshot first (unless the
 * watcher resumes from a version whose later changes are all retained), then every change in
 * version order. Sends only while the stream is ready (gRPC flow control), reading the cache's
 * history through its own cursor, so a slow watcher holds no queue and blocks nobody; one that
 * falls behind the retained history gets a fresh snapshot instead of the changes it missed, so it
 * never silently loses one.
 *
 * @param <T> item type
 * @param <E> event message type
 */
final class WatchStreamer<T, E> {

    /** Changes read from the cache per drain step. */
    private static final int BATCH = 64;

    /** Builds the event messages of one watch kind. */
    interface Events<T, E> {
        E snapshot(long version, List<T> items);

        E change(WatchCache.Change<T> change);
    }

    private final WatchCache<T> cache;
    private final Predicate<T> filter;
    private final boolean deleteFilteredOut;
    private final ServerCallStreamObserver<E> stream;
    private final Events<T, E> events;
    private final Runnable onChange = this::drain;
    private long sentVersion;
    private boolean snapshotDue;
    private boolean closed;

    /**
     * @param fromVersion the version the watcher has applied; 0 asks for a snapshot
     * @param filter which items this watcher sees (e.g. templates that target its cluster)
     * @param deleteFilteredOut an upsert that fails the filter is sent as a delete, for filters
     *     an item can stop passing (a template no longer targeting the cluster); false for filters
     *     an item never changes (a cluster's own config), where such changes are just skipped
     */
    WatchStreamer(WatchCache<T> cache, Predicate<T> filter, boolean deleteFilteredOut, ServerCallStreamObserver<E> stream,
            long fromVersion, Events<T, E> events) {
        this.cache = cache;
        this.filter = filter;
        this.deleteFilteredOut = deleteFilteredOut;
        this.stream = stream;
        this.events = events;
        this.sentVersion = fromVersion;
        this.snapshotDue = fromVersion == 0;
    }

    void start() {
        stream.setOnCancelHandler(this::close);
        stream.setOnReadyHandler(this::drain);
        cache.addListener(onChange);
        drain();
    }

    private void close() {
        synchronized (this) {
            closed = true;
        }
        cache.removeListener(onChange);
    }

    void drain() {
        synchronized (this) {
            try {
                while (!closed && stream.isReady()) {
                    if (!step()) {
                        return;
                    }
                }
            } catch (RuntimeException e) {
                closed = true; // cancelled concurrently
            }
        }
        if (closed) {
            cache.removeListener(onChange);
        }
    }

    /** Sends what is next; false when the watcher is current. Guarded by this. */
    private boolean step() {
        if (!snapshotDue) {
            List<WatchCache.Change<T>> changes = cache.changesSince(sentVersion, BATCH);
            if (changes == null) {
                snapshotDue = true;
            } else if (changes.isEmpty()) {
                return false;
            } else {
                for (WatchCache.Change<T> c : changes) {
                    if (filter.test(c.item())) {
                        stream.onNext(events.change(c));
                    } else if (deleteFilteredOut && c.type() == WatchCache.Change.Type.UPSERT) {
                        // the watcher may hold the item from before it stopped passing the filter
                        stream.onNext(events.change(new WatchCache.Change<>(c.version(), WatchCache.Change.Type.DELETE, c.item())));
                    }
                    sentVersion = c.version();
                    if (!stream.isReady()) {
                        break;
                    }
                }
                return true;
            }
        }
        WatchCache.Snapshot<T> snap = cache.snapshot();
        stream.onNext(events.snapshot(snap.version(), snap.items().stream().filter(filter).toList()));
        sentVersion = snap.version();
        snapshotDue = false;
        return true;
    }
}
