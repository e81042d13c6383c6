package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.SandboxStarter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Removing a template's pool: its idle sandboxes leave the pool at once and are killed in the
 * background, so the caller (the worker's template watch, which applies every later template
 * change) does not wait for the kills. Kills here block until the test lets them end.
 */
class WarmPoolDrainTest {
    private final ExecutorService starter = Executors.newFixedThreadPool(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final CountDownLatch killsMayEnd = new CountDownLatch(1);
    private final AtomicInteger killed = new AtomicInteger();
    private final SlotLimit slots = new SlotLimit(100);

    private final SandboxStarter slowToKill = (sandboxId, template, image) -> new ObjectSandbox(sandboxId) {
        @Override
        public void kill() {
            try {
                killsMayEnd.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            super.kill();
            killed.incrementAndGet();
        }
    };

    @AfterEach
    void stop() {
        killsMayEnd.countDown();
        starter.shutdownNow();
        timer.shutdownNow();
    }

    private WarmPool pool(String name, int size) throws InterruptedException {
        WarmPool p = new WarmPool("c1", Template.newBuilder().setName(name).setPoolSize(size).build(), slowToKill, slots,
                starter, timer, 0);
        p.refill();
        await(p::idle, size);
        return p;
    }

    private static void await(IntSupplier value, int want) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsInt() != want && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(value.getAsInt()).isEqualTo(want);
    }

    @Test
    void retireReturnsBeforeTheKillsEndAndEachSlotIsReleasedAsItsSandboxEnds() throws Exception {
        WarmPool p = pool("gone", 5);
        assertThat(slots.used()).isEqualTo(5);

        CompletableFuture.runAsync(p::retire).get(10, TimeUnit.SECONDS); // a blocking drain never returns here
        assertThat(p.idle()).isZero();
        assertThat(p.poll()).as("no claim gets a sandbox of a retired pool").isNull();
        assertThat(killed.get()).isZero();
        assertThat(slots.used()).as("the host's slots stay taken until the sandboxes have ended").isEqualTo(5);

        killsMayEnd.countDown();
        await(killed::get, 5);
        await(slots::used, 0);
    }

    @Test
    void anotherPoolKeepsStartingWhileOneDrains() throws Exception {
        WarmPool gone = pool("gone", 3);
        CompletableFuture.runAsync(gone::retire).get(10, TimeUnit.SECONDS);
        WarmPool next = pool("next", 4); // the drain takes one starter thread, the other one starts these
        assertThat(killed.get()).isZero();
        assertThat(slots.used()).isEqualTo(7);
        killsMayEnd.countDown();
        await(slots::used, 4);
        assertThat(next.idle()).isEqualTo(4);
    }
}
