package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.SandboxRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Idle warm sandboxes never keep a claim waiting: on a host at its sandbox limit, a claim of a
 * template with nothing idle evicts an idle sandbox of another pool and starts its own in that
 * slot, at once (before: it waited {@link SandboxPools#CLAIM_WAIT} and failed RESOURCE_EXHAUSTED,
 * which the hub answers 503: 50 built templates' pools of one filled a 64-slot worker). The
 * sandboxes are plain objects: the subject is the slot policy.
 */
class IdleEvictionTest {
    private static final SandboxRuntime OBJECTS = ObjectSandbox.RUNTIME;

    @Test
    void aClaimOnAFullHostEvictsAnotherPoolsIdleSandbox() {
        int max = 4;
        try (SandboxPools pools = new SandboxPools("c1", List.of(OBJECTS), max)) {
            List<Template> built = new ArrayList<>();
            for (int i = 0; i < max; i++) { // one warm sandbox each, as built templates have: the host is full
                built.add(Template.newBuilder().setName("built-" + i).setPoolSize(1).build());
            }
            built.add(Template.newBuilder().setName("base").setPoolSize(0).build());
            pools.apply(built);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pools.capacity().stream()
                    .mapToInt(PoolCapacity::getIdle).sum() == max);
            assertThat(pools.capacity().stream().filter(p -> p.getTemplate().equals("base")).findFirst().orElseThrow()
                    .getCapacity()).as("base's capacity counts the idle sandboxes it may evict").isEqualTo(max);

            List<String> claimed = new ArrayList<>();
            long started = System.nanoTime();
            for (int i = 0; i < max; i++) {
                claimed.add(pools.claim(CreateSandboxRequest.newBuilder().setTemplate("base").setTimeoutSeconds(60).build()).id());
            }
            long ms = (System.nanoTime() - started) / 1_000_000;
            assertThat(ms).as("no claim waited for a slot").isLessThan(SandboxPools.CLAIM_WAIT.toMillis() / 2);
            assertThat(pools.capacity().stream().mapToInt(PoolCapacity::getIdle).sum()).as("every idle one evicted").isZero();

            // a kill frees a slot: the evicted pools refill in it
            pools.kill(claimed.get(0));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pools.capacity().stream()
                    .mapToInt(PoolCapacity::getIdle).sum() == 1);
        }
    }
}
