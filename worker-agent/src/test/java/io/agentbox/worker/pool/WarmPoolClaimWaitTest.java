package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxStarter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A claim on a {@link WarmPool} that finds nothing idle and no free host slot waits on the
 * pool's condition: it is woken by the refill that makes a sandbox idle, not by a timer. Starts
 * are held at a gate the test opens, and each start notes when it returned, so the wait's
 * wake-up latency is measured from the moment the sandbox became idle. A claim that polled
 * every 20 ms (as before) would wake 10 ms late on average.
 */
class WarmPoolClaimWaitTest {
    private static final int ROUNDS = 15;

    private final ExecutorService starter = Executors.newFixedThreadPool(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final ExecutorService claims = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-claim"));
    /** One latch per start: the start returns once the test counts it down. */
    private final LinkedBlockingQueue<CountDownLatch> gates = new LinkedBlockingQueue<>();
    /** System.nanoTime when the last start returned its sandbox. */
    private final AtomicLong startedAt = new AtomicLong();
    private final AtomicReference<Thread> claimThread = new AtomicReference<>();

    private final SandboxStarter gated = (sandboxId, template, image) -> {
        CountDownLatch gate = new CountDownLatch(1);
        gates.add(gate);
        try {
            if (!gate.await(30, TimeUnit.SECONDS)) {
                throw Status.UNAVAILABLE.withDescription("gate never opened").asRuntimeException();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.asRuntimeException();
        }
        startedAt.set(System.nanoTime());
        return new ObjectSandbox(sandboxId);
    };

    @AfterEach
    void stop() {
        gates.forEach(CountDownLatch::countDown);
        claims.shutdownNow();
        starter.shutdownNow();
        timer.shutdownNow();
    }

    private static ClaimRequest request() {
        long now = System.currentTimeMillis();
        return new ClaimRequest("team-a", now, now + 60_000);
    }

    /** Starts a claim on another thread and returns once that thread is blocked in the pool's wait. */
    private Future<Long> claimWhenBlocked(WarmPool pool, Duration wait) {
        Future<Long> f = claims.submit(() -> {
            claimThread.set(Thread.currentThread());
            RuntimeSandbox s = pool.claim(request(), wait);
            long returnedAt = System.nanoTime();
            assertThat(s.isAlive()).isTrue();
            pool.released(s); // like a kill: the slot goes back and the pool starts a replacement
            return returnedAt;
        });
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1)).until(() -> {
            Thread t = claimThread.get();
            return t != null && t.getState() == Thread.State.TIMED_WAITING && gates.size() == 1;
        });
        return f;
    }

    @Test
    void aClaimOnAnEmptyPoolIsWokenWhenTheRefillMakesASandboxIdle() throws Exception {
        // one host slot, held by the pool's own start: the claim can neither pop nor start one
        WarmPool pool = new WarmPool("c1", Template.newBuilder().setName("t").setPoolSize(1).build(), gated,
                new SlotLimit(1), starter, timer, 0);
        pool.refill();
        List<Long> latenciesUs = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            Future<Long> claimed = claimWhenBlocked(pool, Duration.ofSeconds(20));
            Thread.sleep(30); // the claim stays blocked while nothing changes
            assertThat(claimed).isNotDone();
            gates.take().countDown();
            long returnedAt = claimed.get(10, TimeUnit.SECONDS);
            latenciesUs.add((returnedAt - startedAt.get()) / 1000);
            claimThread.set(null);
        }
        Collections.sort(latenciesUs);
        long medianUs = latenciesUs.get(ROUNDS / 2);
        System.out.println("warm pool: claim woken " + medianUs + " µs (median of " + ROUNDS + ", max "
                + latenciesUs.get(ROUNDS - 1) + " µs) after the refill made a sandbox idle");
        assertThat(medianUs).as("median wake-up after the sandbox became idle, µs").isLessThan(5_000);
        assertThat(latenciesUs.get(ROUNDS - 1)).as("slowest wake-up, µs").isLessThan(1_000_000);
    }

    @Test
    void aWaitingClaimGivesUpWithResourceExhaustedAndAClosedPoolFailsItAtOnce() throws Exception {
        WarmPool pool = new WarmPool("c1", Template.newBuilder().setName("t").setPoolSize(1).build(), gated,
                new SlotLimit(1), starter, timer, 0);
        pool.refill();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> pool.claim(request(), Duration.ofMillis(300)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getStatus().getDescription()).isEqualTo("cluster c1 is at its limit of 1 sandboxes");
                });
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofMillis(300), Duration.ofSeconds(5));

        Future<Long> waiting = claimWhenBlocked(pool, Duration.ofSeconds(20));
        long closedAt = System.nanoTime();
        pool.close();
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class)
                .cause().satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
                        .isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(Duration.ofNanos(System.nanoTime() - closedAt)).isLessThan(Duration.ofSeconds(2));
    }
}
