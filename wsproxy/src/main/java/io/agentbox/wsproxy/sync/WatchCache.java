package io.agentbox.wsproxy.sync;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The hub's in-memory copy of one watched collection (templates, API key hashes, cluster config)
 * with a bounded history of recent changes, like the Kubernetes API server's watch cache. The
 * store that owns the data assigns resource versions (so they survive a hub restart) and feeds
 * every committed change here; watchers ({@link WatchStreamer}) read the history through their own
 * cursor, so a slow watcher costs no memory and blocks nobody.
 *
 * <p>Thread-safe. Listeners run after every change on the changing thread and must not block.
 *
 * @param <T> item type (a protobuf message)
 */
public final class WatchCache<T> {

    /** Changes retained by default for resuming watchers; older resumes get a snapshot. */
    public static final int DEFAULT_HISTORY = 4096;
    private static final long NEXT = -1;

    private final Function<T, String> keyOf;
    private final int historyLimit;
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();
    // guarded by this
    private final TreeMap<String, T> items = new TreeMap<>();
    private final ArrayDeque<Change<T>> history = new ArrayDeque<>();
    private long version;
    /** Every change with a version above this one is in {@link #history}. */
    private long replayableAfter;

    /**
     * @param keyOf the item's identity (template name, key hash, config key)
     * @param version the resource version of {@code initial}; 0 for an empty, never-changed collection
     * @param historyLimit changes kept for resuming watchers, at least 1
     */
    public WatchCache(Function<T, String> keyOf, long version, List<T> initial, int historyLimit) {
        if (version < 0 || historyLimit < 1) {
            throw new IllegalArgumentException("version must be >= 0 and historyLimit >= 1");
        }
        this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
        this.historyLimit = historyLimit;
        this.version = version;
        this.replayableAfter = version;
        initial.forEach(t -> items.put(keyOf.apply(t), t));
    }

    /** An empty collection at version 0 with the default history. */
    public WatchCache(Function<T, String> keyOf) {
        this(keyOf, 0, List.of(), DEFAULT_HISTORY);
    }

    /** The full set (sorted by key) and the version it corresponds to. */
    public synchronized Snapshot<T> snapshot() {
        return new Snapshot<>(version, List.copyOf(items.values()));
    }

    /** The current resource version. */
    public synchronized long version() {
        return version;
    }

    /** Creates or replaces an item at the next version; returns that version. For sources without a store. */
    public long upsert(T item) {
        return applyUpsert(NEXT, item);
    }

    /**
     * Creates or replaces an item as of {@code version}.
     *
     * @throws IllegalArgumentException if {@code version} is not above the current one
     */
    public long upsert(long version, T item) {
        if (version <= 0) {
            throw new IllegalArgumentException("resource version must be positive: " + version);
        }
        return applyUpsert(version, item);
    }

    /** Deletes the item with {@code key} as of {@code version}; returns whether it existed (if not, no version is used). */
    public boolean delete(long version, String key) {
        if (version <= 0) {
            throw new IllegalArgumentException("resource version must be positive: " + version);
        }
        return applyDelete(version, key);
    }

    /** Deletes at the next version; for sources without a store. */
    public boolean delete(String key) {
        return applyDelete(NEXT, key);
    }

    // listeners take their own locks and then ours: never call them while holding ours
    private long applyUpsert(long requested, T item) {
        Objects.requireNonNull(item, "item");
        long v;
        synchronized (this) {
            v = advance(requested);
            items.put(keyOf.apply(item), item);
            record(new Change<>(v, Change.Type.UPSERT, item));
        }
        notifyListeners();
        return v;
    }

    private boolean applyDelete(long requested, String key) {
        synchronized (this) {
            T old = items.get(key);
            if (old == null) {
                return false;
            }
            long v = advance(requested);
            items.remove(key);
            record(new Change<>(v, Change.Type.DELETE, old));
        }
        notifyListeners();
        return true;
    }

    /**
     * Replaces the whole collection as of {@code version} (e.g. reloaded from the store). History
     * is dropped, so every watcher behind {@code version} gets a snapshot next.
     */
    public void reset(long version, List<T> all) {
        if (version <= 0) {
            throw new IllegalArgumentException("resource version must be positive: " + version);
        }
        synchronized (this) {
            advance(version);
            items.clear();
            all.forEach(t -> items.put(keyOf.apply(t), t));
            history.clear();
            replayableAfter = version;
        }
        notifyListeners();
    }

    /**
     * The changes after {@code after}, oldest first, at most {@code max}. Empty when the watcher
     * is current; {@code null} when they are not all retained any more, or {@code after} is a
     * version this cache never had (then the watcher needs a {@link #snapshot()}).
     */
    public synchronized List<Change<T>> changesSince(long after, int max) {
        if (after == version) {
            return List.of();
        }
        if (after < replayableAfter || after > version) {
            return null;
        }
        List<Change<T>> out = new ArrayList<>(Math.min(max, history.size()));
        for (Change<T> c : history) {
            if (c.version() > after) {
                out.add(c);
                if (out.size() == max) {
                    break;
                }
            }
        }
        return out;
    }

    /** Registers {@code onChange}, run after every change; it must not block. */
    public void addListener(Runnable onChange) {
        listeners.add(onChange);
    }

    public void removeListener(Runnable onChange) {
        listeners.remove(onChange);
    }

    /** Moves to {@code requested} (or the next version for {@link #NEXT}); guarded by this. */
    private long advance(long requested) {
        long next = requested == NEXT ? version + 1 : requested;
        if (next <= version) {
            throw new IllegalArgumentException("resource version " + next + " is not above the current " + version);
        }
        version = next;
        return next;
    }

    private void record(Change<T> c) {
        history.addLast(c);
        if (history.size() > historyLimit) {
            replayableAfter = history.removeFirst().version();
        }
    }

    private void notifyListeners() {
        listeners.forEach(Runnable::run);
    }

    /** @param version resource version of the set; 0 before the first change */
    public record Snapshot<T>(long version, List<T> items) {
    }

    /** One committed change; for a delete, {@code item} is the last state of the deleted item. */
    public record Change<T>(long version, Type type, T item) {
        public enum Type { UPSERT, DELETE }
    }
}
