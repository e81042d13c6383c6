package io.agentbox.worker.runtime.kubernetes.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.util.Backoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReconcileQueue} with real worker threads and a hand-driven timer: coalescing, one run per
 * key at a time, a run again for an event during a run, backoff growth and reset, timers replaced
 * by newer results, and shutdown.
 */
class ReconcileQueueTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** No jitter, so the delays the queue asks for show the backoff exactly: 100, 200, 400, 800, 1000 ms. */
    private static final Backoff BACKOFF = Backoff.of(Duration.ofMillis(100), Duration.ofMillis(1000), Backoff.Jitter.NONE);

    private final FakeTimer timer = new FakeTimer();
    /** Every run, in the order the runs started. */
    private final List<String> runs = new CopyOnWriteArrayList<>();
    private ReconcileQueue<String> queue;

    @AfterEach
    void tearDown() {
        if (queue != null) {
            queue.close(Duration.ofSeconds(1));
        }
    }

    /** A timer that only records; the test fires what it wants, when it wants. */
    static final class FakeTimer implements ReconcileQueue.Timer {
        record Scheduled(Runnable task, Duration delay) {}

        final List<Scheduled> scheduled = new CopyOnWriteArrayList<>();

        @Override
        public void schedule(Runnable task, Duration delay) {
            scheduled.add(new Scheduled(task, delay));
        }

        List<Long> delaysMillis() {
            return scheduled.stream().map(s -> s.delay().toMillis()).toList();
        }

        void fire(int index) {
            scheduled.get(index).task().run();
        }
    }

    private ReconcileQueue<String> start(int workers, Function<String, ReconcileResult> handler) {
        queue = ReconcileQueue.start("test-reconcile", workers, 100, BACKOFF, timer, key -> {
            runs.add(key);
            return handler.apply(key);
        });
        return queue;
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("latch").isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private long count(String key) {
        return runs.stream().filter(key::equals).count();
    }

    @Test
    void requestsForAQueuedKeyCoalesceIntoOneRun() {
        CountDownLatch aStarted = new CountDownLatch(1);
        CountDownLatch releaseA = new CountDownLatch(1);
        start(1, key -> {
            if (key.equals("a")) {
                aStarted.countDown();
                awaitLatch(releaseA);
            }
            return ReconcileResult.done();
        });
        queue.request("a");
        awaitLatch(aStarted); // the only worker is busy, so b stays queued while it is asked for again
        for (int i = 0; i < 5; i++) {
            assertThat(queue.request("b")).isTrue();
        }
        releaseA.countDown();

        await().atMost(WAIT).until(() -> count("b") == 1);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> runs.size() == 2);
        queue.request("z"); // and the worker is still there for the next key
        await().atMost(WAIT).until(() -> runs.size() == 3);
        assertThat(runs).containsExactly("a", "b", "z");
    }

    @Test
    void oneKeyNeverRunsOnTwoThreadsWhileOtherKeysRunInParallel() throws Exception {
        Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        AtomicInteger maxInFlight = new AtomicInteger();
        CyclicBarrier both = new CyclicBarrier(2);
        start(4, key -> {
            if (key.startsWith("pair")) {
                try {
                    both.await(WAIT.toSeconds(), TimeUnit.SECONDS); // only passes if both keys run at once
                } catch (Exception e) {
                    throw new IllegalStateException("the two keys did not run in parallel", e);
                }
                return ReconcileResult.done();
            }
            int now = inFlight.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inFlight.get(key).decrementAndGet();
            return ReconcileResult.done();
        });

        queue.request("pair-1");
        queue.request("pair-2");
        List<Thread> requesters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
                while (System.nanoTime() < end) {
                    queue.request("hot");
                    Thread.onSpinWait();
                }
            });
            requesters.add(t);
            t.start();
        }
        for (Thread t : requesters) {
            t.join();
        }

        await().atMost(WAIT).until(() -> count("pair-1") == 1 && count("pair-2") == 1);
        await().atMost(WAIT).until(() -> inFlight.get("hot").get() == 0);
        assertThat(count("hot")).as("hot runs").isGreaterThan(5);
        assertThat(maxInFlight.get()).as("most concurrent runs of one key").isEqualTo(1);
    }

    @Test
    void aRequestDuringARunRunsTheKeyOnceMoreAfterIt() {
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        start(3, key -> {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            if (runs.size() == 1) {
                firstStarted.countDown();
                awaitLatch(releaseFirst);
            }
            inFlight.decrementAndGet();
            return ReconcileResult.done();
        });
        queue.request("a");
        awaitLatch(firstStarted);
        queue.request("a");
        queue.request("a");
        // two idle workers, yet the run asked for during the first waits for it to end
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> runs.size() == 1);
        releaseFirst.countDown();

        await().atMost(WAIT).until(() -> runs.size() == 2);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> runs.size() == 2);
        assertThat(maxInFlight.get()).isEqualTo(1);
    }

    @Test
    void failuresBackOffExponentiallyUpToTheCapAndASuccessResetsIt() {
        List<ReconcileResult> script = new CopyOnWriteArrayList<>(List.of(
                ReconcileResult.retry("api away"), ReconcileResult.retry("api away"), ReconcileResult.retry("api away"),
                ReconcileResult.retry("api away"), ReconcileResult.retry("api away"),
                ReconcileResult.after(Duration.ofSeconds(30)),
                ReconcileResult.retry("quota"),
                ReconcileResult.retry("policy write failed", Duration.ofMillis(150)),
                ReconcileResult.done()));
        AtomicInteger step = new AtomicInteger();
        start(1, key -> {
            int i = step.getAndIncrement();
            if (i == 6) {
                throw new IllegalStateException("boom"); // a thrown exception is a failure too
            }
            return script.get(i);
        });

        queue.request("a");
        for (int fired = 0; fired < 8; fired++) {
            int n = fired + 1;
            await().atMost(WAIT).until(() -> timer.scheduled.size() == n);
            timer.fire(fired);
        }
        await().atMost(WAIT).until(() -> runs.size() == 9);

        // five failures: 100, 200, 400, 800, then capped at 1000; the success asks for 30 s and
        // resets the count, so the next failures start over at 100 and 200, the last bounded by 150
        assertThat(timer.delaysMillis()).containsExactly(100L, 200L, 400L, 800L, 1000L, 30_000L, 100L, 150L);
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> timer.scheduled.size() == 8 && runs.size() == 9);
    }

    @Test
    void aNewerResultReplacesTheTimerOfAnOlderOne() {
        AtomicInteger step = new AtomicInteger();
        start(1, key -> switch (step.getAndIncrement()) {
            case 0 -> ReconcileResult.after(Duration.ofMinutes(10));
            case 1 -> ReconcileResult.after(Duration.ofMinutes(20));
            default -> ReconcileResult.done();
        });
        queue.request("a");
        await().atMost(WAIT).until(() -> timer.scheduled.size() == 1);
        queue.request("a"); // an event: runs now, and its result (20 minutes) supersedes the 10 minutes
        await().atMost(WAIT).until(() -> runs.size() == 2 && timer.scheduled.size() == 2);

        timer.fire(0);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> runs.size() == 2);
        timer.fire(1);
        await().atMost(WAIT).until(() -> runs.size() == 3);
        timer.fire(1); // a timer fires once: its token is spent
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> runs.size() == 3);
    }

    @Test
    void eventsDoNotWaitForTheBackoff() {
        start(1, key -> ReconcileResult.retry("always"));
        queue.request("a");
        await().atMost(WAIT).until(() -> timer.scheduled.size() == 1);
        queue.request("a");
        await().atMost(WAIT).until(() -> runs.size() == 2 && timer.scheduled.size() == 2);
        assertThat(timer.delaysMillis()).containsExactly(100L, 200L); // the count still grows
    }

    @Test
    void closeRefusesRequestsDrainsQueuedKeysAndDropsTimers() throws Exception {
        CountDownLatch aStarted = new CountDownLatch(1);
        CountDownLatch releaseA = new CountDownLatch(1);
        start(1, key -> {
            if (key.equals("a")) {
                aStarted.countDown();
                awaitLatch(releaseA);
                return ReconcileResult.retry("would retry"); // no timer after close
            }
            return key.equals("b") ? ReconcileResult.after(Duration.ofMillis(1)) : ReconcileResult.done();
        });
        queue.request("t");
        await().atMost(WAIT).until(() -> runs.size() == 1);
        queue.request("a");
        awaitLatch(aStarted);
        queue.request("b");
        queue.request("c");
        queue.request("a"); // would run a again after it, but the queue closes first

        boolean[] drained = new boolean[1];
        Thread closer = new Thread(() -> drained[0] = queue.close(WAIT));
        closer.start();
        await().atMost(WAIT).until(() -> closer.getState() == Thread.State.TIMED_WAITING); // closed, joining
        assertThat(queue.request("d")).isFalse();
        releaseA.countDown();
        closer.join(WAIT.toMillis());

        assertThat(closer.isAlive()).isFalse();
        assertThat(drained[0]).isTrue();
        assertThat(runs).containsExactly("t", "a", "b", "c");
        assertThat(timer.scheduled).isEmpty();
    }

    @Test
    void closeGivesUpOnAStuckRunAndInterruptsIt() {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        start(1, key -> {
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
            return ReconcileResult.done();
        });
        queue.request("stuck");
        awaitLatch(started);
        queue.request("next");

        assertThat(queue.close(Duration.ofMillis(200))).isFalse();
        awaitLatch(interrupted);
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> runs.size() == 1);
    }

    @Test
    void requestsForNewKeysBeyondTheLimitAreRefused() {
        CountDownLatch release = new CountDownLatch(1);
        queue = ReconcileQueue.start("test-reconcile", 1, 2, BACKOFF, timer, key -> {
            awaitLatch(release);
            return ReconcileResult.done();
        });
        assertThat(queue.request("a")).isTrue();
        assertThat(queue.request("b")).isTrue();
        assertThat(queue.request("c")).isFalse();
        assertThat(queue.request("a")).isTrue(); // a key already tracked is always taken
        release.countDown();
    }
}
