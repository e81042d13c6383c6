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

    /** Gives a slot back and lets every pool use it: waiting claims first, then refills. */
    void release() {
        slots.release();
        for (WarmPool p : pools) {
            p.slotFreed();
        }
    }
}
