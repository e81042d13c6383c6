package io.agentbox.worker.runtime.local;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A sandbox's standby container being started in the background (docs/snapshots-and-reset.md):
 * a fresh writable layer with only its init running, for the next reset to switch to. A standby
 * still waiting for an executor thread can be dropped: it then never touches the sandbox's mounts,
 * so a kill or a reset does not wait behind other sandboxes' standbys.
 */
final class Standby {
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DROPPED = 2;

    private final AtomicInteger state = new AtomicInteger(QUEUED);
    private final CompletableFuture<ProcessHandle> init = new CompletableFuture<>();

    private Standby() {}

    /**
     * Queues {@code start} on {@code executor}.
     *
     * @param start starts the container and returns its init once it runs; throws when it cannot
     */
    static Standby start(Executor executor, Supplier<ProcessHandle> start) {
        Standby s = new Standby();
        try {
            executor.execute(() -> {
                if (!s.state.compareAndSet(QUEUED, RUNNING)) {
                    return;
                }
                try {
                    s.init.complete(start.get());
                } catch (Throwable t) {
                    s.init.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            s.state.set(DROPPED); // the runtime is shutting down
            s.init.completeExceptionally(new IllegalStateException("the runtime is shut down"));
        }
        return s;
    }

    /**
     * Drops the standby if it has not started yet.
     *
     * @return true when dropped (nothing of it ran, nothing will); false when it runs or ran
     */
    boolean dropIfQueued() {
        if (state.compareAndSet(QUEUED, DROPPED)) {
            init.completeExceptionally(new IllegalStateException("dropped before it started"));
            return true;
        }
        return false;
    }

    /**
     * Waits up to {@code timeoutMs} for the standby's init.
     *
     * @return its init, running
     * @throws IllegalStateException naming why there is none (it failed, was dropped or timed out)
     * @throws InterruptedException when interrupted meanwhile
     */
    ProcessHandle await(long timeoutMs) throws InterruptedException {
        try {
            ProcessHandle h = init.get(timeoutMs, TimeUnit.MILLISECONDS);
            if (Reaped.ended(h.pid())) {
                throw new IllegalStateException("its init " + h.pid() + " ended");
            }
            return h;
        } catch (ExecutionException e) {
            throw new IllegalStateException(String.valueOf(e.getCause().getMessage()), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("not up after " + timeoutMs + " ms");
        }
    }

    /** Waits until it came up or failed (or drops it if it has not started), so that nothing of it starts later. */
    void settle(long timeoutMs) {
        if (dropIfQueued()) {
            return;
        }
        try {
            init.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // what it left is deleted with the rest of the sandbox
        }
    }
}
