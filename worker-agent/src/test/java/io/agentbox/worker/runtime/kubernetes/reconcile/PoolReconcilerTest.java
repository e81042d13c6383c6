package io.agentbox.worker.runtime.kubernetes.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolSpec;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link PoolReconciler} as a pure function: spec + pods in, plan out (fixed clock, no API). */
class PoolReconcilerTest {
    private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration STARTUP = Duration.ofSeconds(120);

    @Test
    void emptyPoolCreatesReplicas() {
        PoolPlan plan = plan(spec(3, null, null), List.of(), Set.of());
        assertThat(plan.create()).isEqualTo(3);
        assertThat(plan.delete()).isEmpty();
        assertThat(plan.status().getStartingReplicas()).isEqualTo(3);
        assertThat(condition(plan, "Available")).isEqualTo("False");
        assertThat(condition(plan, "Scaling")).isEqualTo("True");
    }

    @Test
    void claimedPodsDoNotCountAgainstReplicasSoAClaimTriggersARefill() {
        List<Pod> pods = List.of(idle("a", 10), idle("b", 10), running("c"));
        PoolPlan plan = plan(spec(3, null, null), pods, Set.of());
        assertThat(plan.create()).isEqualTo(1);
        assertThat(plan.status().getIdleReplicas()).isEqualTo(2);
        assertThat(plan.status().getRunningReplicas()).isEqualTo(1);
    }

    @Test
    void idlePodsHandedOutInMemoryCountAsRunning() {
        PoolPlan plan = plan(spec(2, null, null), List.of(idle("a", 10), idle("b", 10)), Set.of("a"));
        assertThat(plan.create()).isEqualTo(1);
        assertThat(plan.status().getIdleReplicas()).isEqualTo(1);
        assertThat(plan.status().getRunningReplicas()).isEqualTo(1);
    }

    @Test
    void maxReplicasCapsCreatesOverAllPhases() {
        List<Pod> pods = List.of(running("a"), running("b"), running("c"));
        PoolPlan plan = plan(spec(2, null, 4), pods, Set.of());
        assertThat(plan.create()).isEqualTo(1);
    }

    @Test
    void minReplicasKeepsPodsEvenWithZeroReplicas() {
        PoolPlan grow = plan(spec(0, 2, null), List.of(), Set.of());
        assertThat(grow.create()).isEqualTo(2);
        PoolPlan keep = plan(spec(0, 2, null), List.of(idle("a", 10), idle("b", 20), idle("c", 30)), Set.of());
        assertThat(keep.delete()).containsExactly("a"); // the newest of the three
    }

    @Test
    void excessIdlePodsAreDeletedNewestFirstAndStartingOnesBeforeThem() {
        List<Pod> pods = List.of(idle("old", 100), idle("new", 10), starting("boot", 5));
        PoolPlan plan = plan(spec(1, null, null), pods, Set.of());
        assertThat(plan.create()).isZero();
        assertThat(plan.delete()).containsExactly("boot", "new");
    }

    @Test
    void failedPodsAndPodsStuckStartingAreReplaced() {
        List<Pod> pods = List.of(failed("dead"), starting("stuck", 121), starting("fresh", 30));
        PoolPlan plan = plan(spec(2, null, null), pods, Set.of());
        assertThat(plan.delete()).containsExactlyInAnyOrder("dead", "stuck");
        assertThat(plan.create()).isEqualTo(1);
        assertThat(plan.status().getFailedReplicas()).isEqualTo(2);
        assertThat(plan.requeueAfter()).isEqualTo(Duration.ofSeconds(90));
    }

    @Test
    void steadyPoolPlansNothingAndReportsAvailable() {
        PoolPlan plan = plan(spec(2, null, null), List.of(idle("a", 10), idle("b", 10)), Set.of());
        assertThat(plan.create()).isZero();
        assertThat(plan.delete()).isEmpty();
        assertThat(plan.requeueAfter()).isNull();
        assertThat(condition(plan, "Available")).isEqualTo("True");
        assertThat(condition(plan, "Scaling")).isEqualTo("False");
        assertThat(PoolReconciler.sameStatus(plan.status(), plan(spec(2, null, null),
                List.of(idle("a", 10), idle("b", 10)), Set.of()).status())).isTrue();
    }

    @Test
    void waitingClaimsColdStartAnEmptyPool() {
        PoolPlan plan = plan(spec(0, null, null), List.of(), Set.of(), 16);
        assertThat(plan.create()).isEqualTo(16);
        assertThat(plan.status().getStartingReplicas()).isEqualTo(16);
        assertThat(condition(plan, "Scaling")).isEqualTo("True");
    }

    @Test
    void waitingClaimsAddToTheWarmPoolAndPodsAlreadyStartingCountForThem() {
        List<Pod> pods = List.of(idle("a", 10), starting("b", 5), starting("c", 5));
        PoolPlan plan = plan(spec(2, null, null), pods, Set.of(), 4);
        assertThat(plan.create()).isEqualTo(3); // 2 warm + 4 waiting, 3 already idle or starting
        assertThat(plan.delete()).isEmpty();
    }

    @Test
    void waitingClaimsStopAtMaxReplicas() {
        PoolPlan plan = plan(spec(0, null, 5), List.of(running("a"), running("b")), Set.of(), 16);
        assertThat(plan.create()).isEqualTo(3);
    }

    @Test
    void podsStartedForWaitingClaimsAreKeptWhileTheyWaitAndDroppedWhenTheyGiveUp() {
        List<Pod> pods = List.of(idle("a", 10), idle("b", 20));
        assertThat(plan(spec(0, null, null), pods, Set.of(), 2).delete()).isEmpty();
        assertThat(plan(spec(0, null, null), pods, Set.of(), 0).delete()).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void idleAndStartingPodsOfAnotherRevisionAreReplacedAndClaimedOnesKept() {
        List<Pod> pods = List.of(revised(idle("old-idle", 10), "r1"), revised(starting("old-boot", 5), "r1"),
                revised(running("old-claimed"), "r1"), revised(idle("handed", 10), "r1"), revised(idle("new", 3), "r2"),
                idle("unmarked", 20));
        PoolPlan plan = PoolReconciler.plan(spec(3, null, null), pods, Set.of("handed"), 0, "r2", NOW, STARTUP, null, 1);
        // a pod without a revision was made by an older worker: it is outdated as well
        assertThat(plan.delete()).containsExactlyInAnyOrder("old-idle", "old-boot", "unmarked");
        assertThat(plan.create()).isEqualTo(2); // 3 idle wanted, "new" is the only current one
        assertThat(plan.status().getIdleReplicas()).isEqualTo(1);
        assertThat(plan.status().getRunningReplicas()).isEqualTo(2); // "old-claimed" and "handed" stay
        assertThat(plan.status().getStoppingReplicas()).isEqualTo(3);
        assertThat(plan.status().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Scaling");
            assertThat(c.getReason()).isEqualTo("ReplacingOutdatedPods");
        });
    }

    @Test
    void podsOfTheCurrentRevisionOrWithoutARevisionCheckAreLeftAlone() {
        List<Pod> pods = List.of(revised(idle("a", 10), "r2"), revised(idle("b", 10), "r2"));
        PoolPlan current = PoolReconciler.plan(spec(2, null, null), pods, Set.of(), 0, "r2", NOW, STARTUP, null, 1);
        assertThat(current.delete()).isEmpty();
        assertThat(current.create()).isZero();
        PoolPlan unchecked = PoolReconciler.plan(spec(2, null, null), pods, Set.of(), 0, null, NOW, STARTUP, null, 1);
        assertThat(unchecked.delete()).isEmpty();
    }

    @Test
    void invalidSpecIsRejectedWithTheReason() {
        assertThatThrownBy(() -> plan(spec(1, 3, 2), List.of(), Set.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("min <= max");
        assertThatThrownBy(() -> plan(spec(-1, null, null), List.of(), Set.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas=-1");
        assertThatThrownBy(() -> plan(spec(1, null, null), List.of(), Set.of(), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waiting");
    }

    private static PoolPlan plan(SandboxPoolSpec spec, List<Pod> pods, Set<String> claimed) {
        return plan(spec, pods, claimed, 0);
    }

    private static PoolPlan plan(SandboxPoolSpec spec, List<Pod> pods, Set<String> claimed, int waiting) {
        return PoolReconciler.plan(spec, pods, claimed, waiting, NOW, STARTUP, null, 1);
    }

    private static String condition(PoolPlan plan, String type) {
        return plan.status().getConditions().stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow()
                .getStatus();
    }

    private static SandboxPoolSpec spec(Integer replicas, Integer min, Integer max) {
        SandboxPoolSpec s = new SandboxPoolSpec();
        s.setReplicas(replicas);
        s.setMinReplicas(min);
        s.setMaxReplicas(max);
        return s;
    }

    private static PodBuilder pod(String name, long ageSeconds, String phaseLabel) {
        return new PodBuilder().withNewMetadata().withName(name).withCreationTimestamp(NOW.minusSeconds(ageSeconds).toString())
                .addToLabels(PodContract.POOL, "p").addToLabels(PodContract.PHASE, phaseLabel).endMetadata();
    }

    private static Pod idle(String name, long ageSeconds) {
        return pod(name, ageSeconds, PodContract.PHASE_IDLE).withNewStatus().withPhase("Running")
                .withConditions(new PodConditionBuilder().withType("Ready").withStatus("True").build()).endStatus().build();
    }

    private static Pod starting(String name, long ageSeconds) {
        return pod(name, ageSeconds, PodContract.PHASE_IDLE).withNewStatus().withPhase("Pending").endStatus().build();
    }

    private static Pod running(String name) {
        return pod(name, 50, PodContract.PHASE_RUNNING).withNewStatus().withPhase("Running").endStatus().build();
    }

    private static Pod revised(Pod pod, String revision) {
        return new PodBuilder(pod).editMetadata().addToAnnotations(Revision.ANNOTATION, revision).endMetadata().build();
    }

    private static Pod failed(String name) {
        return pod(name, 50, PodContract.PHASE_IDLE).withNewStatus().withPhase("Failed").endStatus().build();
    }
}
