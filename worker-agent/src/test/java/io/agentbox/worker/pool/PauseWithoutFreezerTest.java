package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A runtime whose sandboxes cannot freeze (as kubernetes pods): pause is refused with
 * UNIMPLEMENTED and changes nothing, the timer of an auto-pause sandbox kills it instead, and its
 * sandboxes have no metric samples. The sandboxes are plain objects: the subject is the pool's
 * policy, the freezing itself is tested on real crun sandboxes (PauseResumeTest).
 */
class PauseWithoutFreezerTest {
    private static final SandboxRuntime NO_FREEZER = ObjectSandbox.RUNTIME;

    @Test
    void pauseIsRefusedAndTheTimerKillsInstead() {
        try (SandboxPools pools = new SandboxPools("c1", List.of(NO_FREEZER), 8)) {
            pools.apply(List.of(Template.newBuilder().setName("t").setPoolSize(1).build()));
            String id = pools.claim(CreateSandboxRequest.newBuilder().setTemplate("t").setTimeoutSeconds(60).build()).id();
            assertThatThrownBy(() -> pools.pause(id, false)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
            assertThat(pools.get(id).isPaused()).as("a refused pause changes nothing").isFalse();
            assertThat(pools.running(id)).isNotNull();
            assertThat(pools.metrics(id, 0, 0)).as("nothing to measure").isEmpty();

            String auto = pools.claim(CreateSandboxRequest.newBuilder().setTemplate("t")
                    .setEndAtMs(System.currentTimeMillis() + 300).setAutoPause(true).build()).id();
            Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThatThrownBy(() -> pools.get(auto))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND)));
        }
    }
}
