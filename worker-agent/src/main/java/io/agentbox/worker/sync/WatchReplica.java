package io.agentbox.worker.sync;

import io.agentbox.protocol.v1.EventType;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's replica of one collection the hub pushes (templates, API key hashes, cluster
 * config), kept by applying watch events (sync.proto): a snapshot replaces everything (it is
 * authoritative), an upsert or delete changes one item and must carry a newer version. Thread-safe;
 * listeners get the full new set after every applied event and must not block.
 *
 * @param <T> item type
 */
public final class WatchReplica<T> {
    private static final Logger log = LoggerFactory.getLogger(WatchReplica.class);

    private final String name;
    private final Function<T, String> keyOf;
    private final CopyOnWriteArrayList<Consumer<List<T>>> listeners = new CopyOnWriteArrayList<>();
    // guarded by this
    private final TreeMap<String, T> items = new TreeMap<>();
    private long version;
    private long snapshots;

    /** @param name for logs and {@code applied_versions}, e.g. "templates" */
    public WatchReplica(String name, Function<T, String> keyOf) {
        this.name = Objects.requireNonNull(name, "name");
        this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
    }

    public String name() {
        return name;
    }

    /** The resource version of the last applied event; 0 before the first. */
    public synchronized long version() {
        return version;
    }

    /** How many snapshots were applied; a watch that resumed from the replica's version adds none. */
    public synchronized long snapshotsApplied() {
        return snapshots;
    }

    /** The current items, sorted by key. */
    public synchronized List<T> items() {
        return List.copyOf(items.values());
    }

    /** The item with {@code key}, or null. */
    public synchronized T get(String key) {
        return items.get(key);
    }

    /**
     * Applies one event. Returns false (and changes nothing) for an upsert or delete that is not
     * newer than what was applied, or an unknown type.
     */
    public boolean apply(EventType type, long eventVersion, List<T> eventItems) {
        List<T> now;
        synchronized (this) {
            switch (type) {
                case EVENT_TYPE_SNAPSHOT -> {
                    snapshots++;
                    items.clear();
                    eventItems.forEach(t -> items.put(keyOf.apply(t), t));
                }
                case EVENT_TYPE_UPSERT, EVENT_TYPE_DELETE -> {
                    if (eventVersion <= version) {
                        log.warn("{}: ignoring {} at version {}, already at {}", name, type, eventVersion, version);
                        return false;
                    }
                    for (T t : eventItems) {
                        if (type == EventType.EVENT_TYPE_UPSERT) {
                            items.put(keyOf.apply(t), t);
                        } else {
                            items.remove(keyOf.apply(t));
                        }
                    }
                }
                default -> {
                    log.warn("{}: ignoring event of type {}", name, type);
                    return false;
                }
            }
            version = eventVersion;
            now = List.copyOf(items.values());
        }
        listeners.forEach(l -> l.accept(now));
        return true;
    }

    /** Registers {@code onChange}, called with the full set after every applied event. */
    public void addListener(Consumer<List<T>> onChange) {
        listeners.add(onChange);
    }
}
