package io.agentbox.worker.image.registry;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Bearer tokens per (realm, service, scope), each kept until shortly before its
 * {@code expires_in} runs out. Thread-safe.
 */
final class TokenCache {
    /** Tokens are dropped this fraction of their lifetime early (at most 10 s), so one in flight does not expire. */
    static final double EARLY_FRACTION = 0.1;

    record Key(String realm, String service, String scope) {}

    private record Entry(String token, long expiresAtNanos) {}

    private final ConcurrentMap<Key, Entry> tokens = new ConcurrentHashMap<>();
    private final ConcurrentMap<Key, Object> locks = new ConcurrentHashMap<>();

    /** The cached token for {@code key}, or null when absent or expired. */
    String get(Key key) {
        Entry e = tokens.get(key);
        if (e == null) {
            return null;
        }
        if (System.nanoTime() - e.expiresAtNanos >= 0) {
            tokens.remove(key, e);
            return null;
        }
        return e.token;
    }

    void put(Key key, String token, Duration lifetime) {
        long early = Math.min(Duration.ofSeconds(10).toNanos(), (long) (lifetime.toNanos() * EARLY_FRACTION));
        tokens.put(key, new Entry(token, System.nanoTime() + lifetime.toNanos() - early));
    }

    /** Forgets {@code token} for {@code key} (the registry refused it before its time). */
    void invalidate(Key key, String token) {
        tokens.computeIfPresent(key, (k, e) -> e.token.equals(token) ? null : e);
    }

    /** One lock per key so concurrent pulls of one repository fetch one token, not one each. */
    Object lock(Key key) {
        return locks.computeIfAbsent(key, k -> new Object());
    }
}
