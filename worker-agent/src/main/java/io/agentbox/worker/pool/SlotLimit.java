package io.agentbox.worker.pool;

import java.util.concurrent.atomic.AtomicInteger;

/** Counts live sandboxes (idle, starting and claimed) against the host's maximum. */
final class SlotLimit {
    private final int max;
    private final AtomicInteger used = new AtomicInteger();

    SlotLimit(int max) {
        if (max <= 0) {
            throw new IllegalArgumentException("max sandboxes must be positive, got " + max);
        }
        this.max = max;
    }

    boolean tryAcquire() {
        while (true) {
            int n = used.get();
            if (n >= max) {
                return false;
            }
            if (used.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    void release() {
        used.decrementAndGet();
    }

    int used() {
        return used.get();
    }

    int max() {
        return max;
    }
}
