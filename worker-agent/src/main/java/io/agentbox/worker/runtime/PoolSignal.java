package io.agentbox.worker.runtime;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What a claim on an empty pool waits for: a change counter that the pool bumps when a sandbox
 * becomes idle, a host slot frees, or the pool retires or closes. A claimer reads
 * {@link #version()} before looking, then {@link #await}s a newer version, so a change between
 * its look and its wait is never missed. Thread-safe.
 */
public final class PoolSignal {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long version;

    public long version() {
        lock.lock();
        try {
            return version;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every claim waiting on this pool. */
    public void signal() {
        lock.lock();
        try {
            version++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the version differs from {@code seen} or {@code nanos} pass.
     *
     * @return the nanoseconds left of {@code nanos} (at most 0 when the time passed)
     * @throws InterruptedException when the thread is interrupted
     */
    public long await(long seen, long nanos) throws InterruptedException {
        lock.lock();
        try {
            while (version == seen && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
            return nanos;
        } finally {
            lock.unlock();
        }
    }
}
