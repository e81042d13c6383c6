package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.SandboxStarter;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The refill policy of {@link WarmPool}: starts wait for a pause in claims unless the pool runs
 * low. Sandbox processes play no part in the policy, so sandboxes here are plain objects that count
 * their starts (the real runtimes are tested with real sandboxes elsewhere).
 */
class WarmPoolRefillTest {
    private final ExecutorService starter = Executors.newFixedThreadPool(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger starts = new AtomicInteger();

    private final SandboxStarter runtime = (sandboxId, template, image) -> {
        starts.incrementAndGet();
        return new ObjectSandbox(sandboxId);
    };

    @AfterEach
    void stop() {
        starter.shutdownNow();
        timer.shutdownNow();
    }

    private WarmPool pool(int size, long quietMs) throws InterruptedException {
        WarmPool p = new WarmPool("c1", Template.newBuilder().setName("t").setPoolSize(size).build(), runtime,
                new SlotLimit(1000), starter, timer, quietMs);
        p.refill();
        awaitIdle(p, size);
        starts.set(0);
        return p;
    }

    private static void awaitIdle(WarmPool p, int want) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (p.idle() < want && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(p.idle()).isEqualTo(want);
    }

    @Test
    void claimsDoNotStartSandboxesUntilTheyPause() throws Exception {
        WarmPool p = pool(8, 300);
        for (int i = 0; i < 5; i++) {
            assertThat(p.poll()).isNotNull();
        }
        Thread.sleep(100); // shorter than the quiet time: nothing started yet
        assertThat(starts.get()).isZero();
        assertThat(p.idle()).isEqualTo(3);
        awaitIdle(p, 8); // the pause came: refilled
        assertThat(starts.get()).isEqualTo(5);
    }

    @Test
    void aSnapshotTemplateRepointedAtTheHubsCopyKeepsItsWarmSandboxes() throws Exception {
        Template local = Template.newBuilder().setName("s").setPoolSize(4).setSnapshot("snap-1").build();
        WarmPool p = new WarmPool("c1", local, runtime, new SlotLimit(1000), starter, timer, 0);
        p.refill();
        awaitIdle(p, 4);
        starts.set(0);
        // the hub copied the snapshot and re-pointed its template: same content, another reference
        p.update(local.toBuilder().setImage("builds.agentbox.internal/snapshots/snap-1@sha256:" + "a".repeat(64)).build());
        assertThat(p.imageState().isReady()).as("no pull window: claims keep being served").isTrue();
        assertThat(p.idle()).as("the warm sandboxes stay").isEqualTo(4);
        Thread.sleep(100);
        assertThat(starts.get()).isZero();

        // a template whose image really changes is drained and prepared again
        Template builtIn = Template.newBuilder().setName("t").setPoolSize(2).build();
        WarmPool q = new WarmPool("c1", builtIn, runtime, new SlotLimit(1000), starter, timer, 0);
        q.refill();
        awaitIdle(q, 2);
        q.update(builtIn.toBuilder().setImage("reg/a:2").build());
        assertThat(q.idle()).isZero();
        assertThat(q.imageState().isReady()).isFalse();
    }

    @Test
    void aPoolBelowAQuarterRefillsAtOnce() throws Exception {
        WarmPool p = pool(8, 60_000); // no pause would ever be long enough
        for (int i = 0; i < 7; i++) {
            assertThat(p.poll()).isNotNull();
        }
        awaitIdle(p, 8);
        assertThat(starts.get()).isEqualTo(7);
    }
}
