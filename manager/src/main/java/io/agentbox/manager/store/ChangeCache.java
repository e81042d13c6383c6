package io.agentbox.manager.store;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Found values read from the store, kept until a change of one of {@code kinds} commits through
 * this JVM's {@link ChangeLog} (then all are dropped) or for at most {@code ttl} (bounds staleness
 * for changes made by another hub replica sharing the database). Lookups that find nothing are not
 * kept, so unknown keys cannot fill it; it holds at most {@link #MAX_ENTRIES} entries.
 */
final class ChangeCache<K, V> {
    static final int MAX_ENTRIES = 10_000;
    /** How stale an entry may be after another hub replica changed it (this JVM's changes apply at once). */
    static final Duration TTL = Duration.ofSeconds(1);

    private record Entry<V>(V value, long loadedAtNanos) {}

    private final ConcurrentHashMap<K, Entry<V>> entries = new ConcurrentHashMap<>();
    /** Bumped by every relevant change: a load that raced with one is not kept. */
    private final AtomicLong epoch = new AtomicLong();
    private final long ttlNanos;

    ChangeCache(ChangeLog changes, Set<ChangeLog.Kind> kinds, Duration ttl) {
        this.ttlNanos = ttl.toNanos();
        changes.addListener(c -> {
            if (kinds.contains(c.kind())) {
                epoch.incrementAndGet();
                entries.clear();
            }
        });
    }

    Optional<V> get(K key, Function<K, Optional<V>> loader) {
        Entry<V> e = entries.get(key);
        long now = System.nanoTime();
        if (e != null && now - e.loadedAtNanos() < ttlNanos) {
            return Optional.of(e.value());
        }
        long before = epoch.get();
        Optional<V> loaded = loader.apply(key);
        if (loaded.isPresent() && epoch.get() == before) {
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear();
            }
            entries.put(key, new Entry<>(loaded.get(), now));
        }
        return loaded;
    }
}
