package io.agentbox.worker.pool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the warm pools of one worker share: the host-wide limit on live sandboxes, the threads
 * that start sandboxes in the background, and the timer for refill pauses and retries. A slot
 * that frees wakes every pool (claims waiting for a slot, refills held back by the limit).
 * Thread-safe.
 */
final class WarmPoolHost {
    final SlotLimit slots;
    final Executor starter;
    final ScheduledExecutorService timer;
    private final Set<WarmPool> pools = ConcurrentHashMap.newKeySet();

    WarmPoolHost(SlotLimit slots, Executor starter, ScheduledExecutorService timer) {
        this.slots = slots;
        this.starter = starter;
        this.timer = timer;
    }

    void add(WarmPool pool) {
        pools.add(pool);
    }

    void remove(WarmPool pool) {
        pools.remove(pool);
    }

    /**
     * Makes room for a claim on {@code claimer} when the host is at its limit: kills one idle
     * sandbox of another pool (the pool with the most idle ones) and hands its slot to the caller
     * instead of releasing it. Idle warm sandboxes belong to no team and serve nobody yet, so they
     * never keep a claim waiting; the pool that lost one refills when a slot frees.
     *
     * @return true when a sandbox was evicted: the caller now holds its slot
     */
    boolean evictIdleFor(WarmPool claimer) {
        for (int attempt = 0; attempt < 3; attempt++) { // another claim may take the idle one first
            WarmPool victim = null;
            int most = 0;
            for (WarmPool p : pools) {
                int idle = p.idle();
                if (p != claimer && idle > most) {
                    most = idle;
                    victim = p;
                }
            }
            if (victim == null) {
                return false;
            }
            if (victim.evictOne()) {
                return true;
            }
        }
        return false;
    }

    /** Idle sandboxes of pools other than {@code pool}: slots a claim on it may take ({@link #evictIdleFor}). */
    int evictableFor(WarmPool pool) {
        int n = 0;
        for (WarmPool p : pools) {
            if (p != pool) {
                n += p.idle();
            }
        }
        return n;
    }

    /** Gives a slot back and lets every pool use it: waiting claims first, then refills. */
    void release() {
        slots.release();
        for (WarmPool p : pools) {
            p.slotFreed();
        }
    }
}
