package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.SandboxRuntime;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Pause, resume and reset of one claimed sandbox run one after the other ({@link ClaimedSandbox}'s
 * lifecycle lock): a pause that arrives while a reset swaps the container waits for it instead of
 * freezing a container on its way out (on the local runtime: a cgroup being removed, a 503 naming
 * its path), and a reset that comes after a pause is refused as SANDBOX_PAUSED. The sandbox is a
 * plain object whose reset blocks until the test lets it go; freezing on crun is tested with real
 * sandboxes (PauseResumeTest).
 */
class LifecycleSerializationTest {
    /** A sandbox that records whether a freeze came while a reset was under way. */
    static final class SlowResetSandbox extends ObjectSandbox {
        final CountDownLatch resetEntered = new CountDownLatch(1);
        final CountDownLatch releaseReset = new CountDownLatch(1);
        final AtomicBoolean resetting = new AtomicBoolean();
        final AtomicBoolean frozeDuringReset = new AtomicBoolean();
        volatile boolean frozen;

        SlowResetSandbox(String id) {
            super(id);
        }

        @Override
        public void freeze() {
            if (resetting.get()) {
                frozeDuringReset.set(true);
            }
            frozen = true;
        }

        @Override
        public void thaw() {
            frozen = false;
        }

        @Override
        public void reset() {
            resetting.set(true);
            resetEntered.countDown();
            try {
                releaseReset.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            frozen = false; // a fresh container
            resetting.set(false);
        }
    }

    @Test
    void aPauseDuringAResetWaitsForItAndAResetOfAPausedSandboxIsRefused() throws Exception {
        java.util.concurrent.atomic.AtomicReference<SlowResetSandbox> made = new java.util.concurrent.atomic.AtomicReference<>();
        SandboxRuntime runtime = ObjectSandbox.runtime(id -> {
            SlowResetSandbox s = new SlowResetSandbox(id);
            made.set(s);
            return s;
        });
        try (SandboxPools pools = new SandboxPools("c1", List.of(runtime), 4)) {
            pools.apply(List.of(Template.newBuilder().setName("t").setPoolSize(0).build()));
            String id = pools.claim(CreateSandboxRequest.newBuilder().setTemplate("t").setTimeoutSeconds(60).build()).id();
            SlowResetSandbox sandbox = made.get();
            ClaimedSandbox claimed = pools.get(id);

            CompletableFuture<Void> reset = CompletableFuture.runAsync(claimed::reset);
            assertThat(sandbox.resetEntered.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<ClaimedSandbox> pause = CompletableFuture.supplyAsync(() -> pools.pause(id, false));
            Thread.sleep(200);
            assertThat(pause).as("the pause waits while the reset runs").isNotDone();
            sandbox.releaseReset.countDown();
            reset.get(10, TimeUnit.SECONDS);
            pause.get(10, TimeUnit.SECONDS);
            assertThat(sandbox.frozeDuringReset).as("no freeze of a container being replaced").isFalse();
            assertThat(sandbox.frozen).as("the pause froze the new container").isTrue();
            assertThat(claimed.isPaused()).isTrue();

            assertThatThrownBy(claimed::reset).satisfies(e -> assertThat(ErrorReason.SANDBOX_PAUSED.in(e)).isTrue());
            assertThat(sandbox.frozen).as("a refused reset changes nothing").isTrue();
        }
    }
}
