package io.agentbox.manager.bench;

import io.agentbox.mux.util.DaemonThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A closed-loop load: {@code concurrency} threads each run the next step as soon as their last
 * one answered, until {@code steps} steps ran or the deadline passed. The first failure stops
 * every thread and is rethrown.
 */
final class ClosedLoop {
    /** One step; {@code index} counts from 0 across all threads. */
    interface Step {
        void run(int index) throws Exception;
    }

    private ClosedLoop() {}

    /**
     * @param deadlineNanos {@link System#nanoTime()} after which no new step starts; 0 = none
     * @return steps completed and wall time
     */
    static Result run(int concurrency, int steps, long deadlineNanos, Step step) {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < concurrency; t++) {
            threads.add(DaemonThreads.start("bench-" + t, () -> {
                int i;
                while (failure.get() == null && (deadlineNanos == 0 || System.nanoTime() < deadlineNanos)
                        && (i = next.getAndIncrement()) < steps) {
                    try {
                        step.run(i);
                        done.incrementAndGet();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }
            }));
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted");
            }
        }
        long wall = System.nanoTime() - t0;
        Throwable e = failure.get();
        if (e instanceof RuntimeException re) {
            throw re;
        }
        if (e != null) {
            throw new BenchException(e.toString());
        }
        return new Result(done.get(), wall);
    }

    /** {@code steps} completed in {@code wallNanos}. */
    record Result(int steps, long wallNanos) {
        double perSecond() {
            return steps / (wallNanos / 1e9);
        }
    }
}
