package io.agentbox.worker.image.store;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What the open {@link Lease}s of one store hold, counted (two builds may hold one layer). */
final class Leases {
    private final StoreLock lock;
    /** Guarded by this. */
    private final Map<String, Integer> blobs = new HashMap<>();
    /** Guarded by this. */
    private final Map<String, Integer> layers = new HashMap<>();

    Leases(StoreLock lock) {
        this.lock = lock;
    }

    Lease open() {
        return new Lease(this);
    }

    /** Under the store's lock, so a GC under way finishes first (see {@link Lease}). */
    void add(String blobDigest, String diffId) throws IOException {
        try (StoreLock.Held held = lock.acquire()) {
            synchronized (this) {
                if (blobDigest != null) {
                    blobs.merge(blobDigest, 1, Integer::sum);
                }
                if (diffId != null) {
                    layers.merge(diffId, 1, Integer::sum);
                }
            }
        }
    }

    synchronized void remove(List<String> blobDigests, List<String> diffIds) {
        blobDigests.forEach(d -> blobs.computeIfPresent(d, (k, n) -> n == 1 ? null : n - 1));
        diffIds.forEach(d -> layers.computeIfPresent(d, (k, n) -> n == 1 ? null : n - 1));
    }

    synchronized boolean holdsBlob(String digest) {
        return blobs.containsKey(digest);
    }

    synchronized boolean holdsLayer(String diffId) {
        return layers.containsKey(diffId);
    }
}
