package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.worker.util.Backoff;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A per-key work queue for reconciles, in the manner of the work queue under a Kubernetes
 * controller (java-operator-sdk's {@code EventProcessor}, client-go's rate-limited queue).
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li>A key is queued at most once: requests for a key already queued coalesce into one run.
 *   <li>A key is never reconciled by two threads at once; different keys run in parallel on up to
 *       {@code workers} threads, in the order they were queued.
 *   <li>A request for a key while it runs marks it, and it runs once more right after: an event
 *       during a reconcile is never lost and never causes a concurrent run.
 *   <li>A failure (the handler throws, or returns {@link ReconcileResult#retry}) runs the key again
 *       after {@link Backoff#delay}{@code (failures in a row)}, or sooner if the result says so. A
 *       success resets the count and runs the key again after its {@code requeueAfter}, if any.
 *       Each result replaces the timer of the one before; requests do not wait for the backoff.
 *   <li>{@link #close} refuses new requests and drops timers, then lets the workers finish the run
 *       in progress and the keys already queued (drains), waiting up to its grace for them.
 * </ul>
 *
 * <p><b>Threading.</b> {@link #request} may be called from any thread and never blocks on a
 * reconcile. The handler runs on the queue's daemon worker threads; timers fire on whatever
 * thread the {@link Timer} uses. An {@link Error} thrown by the handler counts as a failure of its
 * key and then ends that worker thread.
 *
 * <p><b>Limits.</b> At most {@code maxKeys} keys are tracked at once (queued, running, waiting for
 * a timer or counting failures); a request for a new key beyond that is refused and logged. A key
 * with nothing pending is forgotten.
 */
public final class ReconcileQueue<K> implements AutoCloseable {
    /** Reconciles one key; runs on a worker thread, never twice at once for one key. */
    @FunctionalInterface
    public interface Handler<K> {
        /** @return what to do next; null counts as {@link ReconcileResult#done} */
        ReconcileResult reconcile(K key);
    }

    /** Runs a task after a delay: the queue's only source of time, so tests can drive it by hand. */
    @FunctionalInterface
    public interface Timer {
        /** @throws RejectedExecutionException when the timer is shut down (the task is dropped) */
        void schedule(Runnable task, Duration delay);

        /** A timer on {@code scheduler}, which its owner shuts down after the queue is closed. */
        static Timer on(ScheduledExecutorService scheduler) {
            return (task, delay) -> scheduler.schedule(task, Math.max(0, delay.toMillis()), TimeUnit.MILLISECONDS);
        }
    }

    private static final Logger log = LoggerFactory.getLogger(ReconcileQueue.class);

    /** A key's place in the queue; guarded by {@link #lock}. */
    private static final class KeyState {
        /** In {@link #ready}. */
        boolean queued;
        /** On a worker now. */
        boolean running;
        /** Requested while running: queue again when the run ends. */
        boolean again;
        /** Failed runs in a row. */
        int failures;
        /** Token of the timer that may queue this key, 0 for none; a timer with another token is stale. */
        long timer;

        boolean idle() {
            return !queued && !running && timer == 0 && failures == 0;
        }
    }

    private final String name;
    private final Backoff backoff;
    private final Timer timer;
    private final Handler<K> handler;
    private final int maxKeys;
    private final Thread[] workers;

    private final Object lock = new Object();
    // guarded by lock
    private final Map<K, KeyState> keys = new HashMap<>();
    private final ArrayDeque<K> ready = new ArrayDeque<>();
    private long lastToken;
    private boolean closed;
    /** Set when {@link #close} stopped waiting: workers take no further key. */
    private volatile boolean abandoned;

    private ReconcileQueue(String name, int workers, int maxKeys, Backoff backoff, Timer timer, Handler<K> handler) {
        this.name = name;
        this.maxKeys = maxKeys;
        this.backoff = backoff;
        this.timer = timer;
        this.handler = handler;
        this.workers = new Thread[workers];
    }

    /**
     * Starts the worker threads ({@code name-1} .. {@code name-workers}, daemons).
     *
     * @param workers threads running reconciles of different keys in parallel, at least 1
     * @param maxKeys most keys tracked at once, at least 1
     * @param backoff waits between retries of a failing key
     * @throws IllegalArgumentException when {@code workers} or {@code maxKeys} is below 1
     */
    public static <K> ReconcileQueue<K> start(String name, int workers, int maxKeys, Backoff backoff, Timer timer,
                                              Handler<K> handler) {
        if (workers < 1 || maxKeys < 1) {
            throw new IllegalArgumentException("need at least one worker and one key, got " + workers + " / " + maxKeys);
        }
        ReconcileQueue<K> q = new ReconcileQueue<>(name, workers, maxKeys, Objects.requireNonNull(backoff),
                Objects.requireNonNull(timer), Objects.requireNonNull(handler));
        for (int i = 0; i < workers; i++) {
            q.workers[i] = DaemonThreads.start(name + "-" + (i + 1), q::work);
        }
        return q;
    }

    /**
     * Asks for a reconcile of {@code key}: queues it, or marks it to run again if it is running,
     * or does nothing if it is queued already.
     *
     * @return false when the queue is closed or tracks {@code maxKeys} other keys (nothing happens)
     */
    public boolean request(K key) {
        Objects.requireNonNull(key, "key");
        synchronized (lock) {
            if (closed) {
                return false;
            }
            KeyState st = keys.get(key);
            if (st == null) {
                if (keys.size() >= maxKeys) {
                    log.warn("{}: {} keys pending already; dropping the request for {}", name, maxKeys, key);
                    return false;
                }
                st = new KeyState();
                keys.put(key, st);
            }
            enqueue(key, st);
            return true;
        }
    }

    private void enqueue(K key, KeyState st) {
        if (st.running) {
            st.again = true;
        } else if (!st.queued) {
            st.queued = true;
            ready.addLast(key);
            lock.notify();
        }
    }

    private void work() {
        while (true) {
            K key;
            KeyState st;
            synchronized (lock) {
                while (ready.isEmpty() && !closed) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return; // close gave up waiting
                    }
                }
                key = abandoned ? null : ready.pollFirst();
                if (key == null) {
                    return; // closed and drained, or close gave up
                }
                st = keys.get(key);
                st.queued = false;
                st.running = true;
            }
            ReconcileResult result = null;
            RuntimeException error = null;
            try {
                result = handler.reconcile(key);
            } catch (RuntimeException e) {
                error = e;
            } finally {
                synchronized (lock) {
                    finish(key, st, result, error);
                }
            }
        }
    }

    /** Records the end of a run: failure count, the next timer, a run again if one was requested. */
    private void finish(K key, KeyState st, ReconcileResult result, RuntimeException error) {
        st.running = false;
        st.timer = 0; // this result decides when to look again, not an older one
        if (result == null && error == null) {
            // the handler threw an Error: count it as a failure so the key is not left stuck
            error = new IllegalStateException("reconcile ended abruptly");
        }
        Duration next;
        if (error != null || result.failed()) {
            st.failures = st.failures == Integer.MAX_VALUE ? st.failures : st.failures + 1;
            next = backoff.delay(st.failures);
            Duration latest = result == null ? null : result.requeueAfter();
            if (latest != null && latest.compareTo(next) < 0) {
                next = latest;
            }
            String why = error != null ? error.toString() : result.failure();
            log.warn("{}: reconcile of {} failed ({} in a row): {}; next try in {} ms", name, key, st.failures, why,
                    next.toMillis());
        } else {
            st.failures = 0;
            next = result.requeueAfter();
        }
        if (closed) {
            st.again = false;
        } else if (st.again) {
            st.again = false;
            enqueue(key, st); // its result sets the timer
        } else if (next != null) {
            long token = ++lastToken;
            st.timer = token;
            try {
                timer.schedule(() -> fire(key, token), next);
            } catch (RejectedExecutionException e) {
                st.timer = 0; // the timer is shutting down: so is the queue's owner
            }
        }
        if (st.idle()) {
            keys.remove(key);
        }
    }

    private void fire(K key, long token) {
        synchronized (lock) {
            KeyState st = keys.get(key);
            if (closed || st == null || st.timer != token) {
                return; // closed, or a newer result replaced this timer
            }
            st.timer = 0;
            enqueue(key, st);
        }
    }

    /**
     * Refuses new requests and drops timers; the workers finish the runs in progress and the keys
     * already queued, then stop.
     *
     * @return true when they finished within {@code grace}; false when they were interrupted instead
     */
    public boolean close(Duration grace) {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        boolean drained = true;
        for (Thread t : workers) {
            if (t != Thread.currentThread()) {
                try {
                    t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        for (Thread t : workers) {
            if (t.isAlive() && t != Thread.currentThread()) {
                abandoned = true;
                t.interrupt();
                drained = false;
            }
        }
        if (!drained) {
            log.warn("{}: reconciles still running after {} ms; interrupted", name, grace.toMillis());
        }
        return drained;
    }

    /** {@link #close(Duration)} with 5 s of grace. */
    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }
}
