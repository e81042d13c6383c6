package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolSpec;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Decides how to move one pool toward its spec: a pure function of the spec, the pool's pods as
 * the informer cache shows them, and the pods claimed in memory but not yet labelled. It never
 * calls the API; {@link PoolController} applies the returned {@link PoolPlan}.
 *
 * <p>Rules: failed pods and pods still starting after the startup timeout are deleted; new pods
 * are created until idle + starting reaches {@code replicas} plus the claims waiting for a pod,
 * and all live pods reach
 * {@code minReplicas}, never past {@code maxReplicas}; idle pods beyond {@code replicas} are
 * deleted (starting ones first, then the newest) while {@code minReplicas} stays met; pods
 * beyond it are idle beyond {@code replicas} plus waiting claims. Idle and starting pods whose
 * {@link Revision} differs from the pool's current one (its image, limits or network changed)
 * are deleted and replaced; they count as stopping. Claimed pods keep the revision they started
 * with until released.
 */
public final class PoolReconciler {
    private PoolReconciler() {}

    /**
     * @param pods the pool's pods (any phase)
     * @param claimedInMemory names of idle-looking pods already handed to a sandbox whose label
     *     write is still in flight; they count as running
     * @param waiting claims that found no idle pod and are still asking: demand on top of
     *     {@code replicas}, so an empty pool cold-starts a pod per waiting claim (within
     *     {@code maxReplicas}); must be >= 0
     * @param startupTimeout how long a pod may stay starting
     * @param previous the stored status (for condition transition times), may be null
     * @throws IllegalArgumentException for a spec with negative counts or min above max
     */
    public static PoolPlan plan(SandboxPoolSpec spec, List<Pod> pods, Set<String> claimedInMemory, int waiting,
                                Instant now, Duration startupTimeout, SandboxPoolStatus previous, long generation) {
        return plan(spec, pods, claimedInMemory, waiting, null, now, startupTimeout, previous, generation);
    }

    /**
     * As {@link #plan(SandboxPoolSpec, List, Set, int, Instant, Duration, SandboxPoolStatus, long)},
     * replacing unclaimed pods of another revision.
     *
     * @param revision the {@link Revision} a new pod of this pool carries; null = never replace
     */
    public static PoolPlan plan(SandboxPoolSpec spec, List<Pod> pods, Set<String> claimedInMemory, int waiting,
                                String revision, Instant now, Duration startupTimeout, SandboxPoolStatus previous,
                                long generation) {
        if (waiting < 0) {
            throw new IllegalArgumentException("waiting claims must be >= 0, got " + waiting);
        }
        int replicas = orZero(spec.getReplicas());
        int min = orZero(spec.getMinReplicas());
        int max = spec.getMaxReplicas() == null ? Integer.MAX_VALUE : spec.getMaxReplicas();
        if (replicas < 0 || min < 0 || max < 0 || min > max) {
            throw new IllegalArgumentException("invalid pool spec: replicas=" + replicas + " minReplicas=" + min
                    + " maxReplicas=" + spec.getMaxReplicas() + " (counts must be >= 0 and min <= max)");
        }
        Map<PodPhase, List<Pod>> byPhase = new EnumMap<>(PodPhase.class);
        for (PodPhase p : PodPhase.values()) {
            byPhase.put(p, new ArrayList<>());
        }
        List<String> delete = new ArrayList<>();
        int outdated = 0;
        Instant nextDeadline = null;
        for (Pod pod : pods) {
            PodPhase phase = PodContract.phase(pod);
            if (phase == PodPhase.IDLE && claimedInMemory.contains(PodContract.name(pod))) {
                phase = PodPhase.RUNNING;
            }
            if ((phase == PodPhase.IDLE || phase == PodPhase.STARTING) && revision != null
                    && !revision.equals(Revision.carried(pod.getMetadata()))) {
                delete.add(PodContract.name(pod));
                outdated++;
                continue;
            }
            if (phase == PodPhase.STARTING) {
                Instant deadline = created(pod, now).plus(startupTimeout);
                if (!deadline.isAfter(now)) {
                    phase = PodPhase.FAILED;
                } else if (nextDeadline == null || deadline.isBefore(nextDeadline)) {
                    nextDeadline = deadline;
                }
            }
            byPhase.get(phase).add(pod);
        }
        for (Pod failed : byPhase.get(PodPhase.FAILED)) {
            delete.add(PodContract.name(failed));
        }
        int idle = byPhase.get(PodPhase.IDLE).size();
        int starting = byPhase.get(PodPhase.STARTING).size();
        int running = byPhase.get(PodPhase.RUNNING).size();
        int live = idle + starting + running;

        // pods not yet claimed should cover the warm pool plus every claim already waiting
        long target = (long) replicas + waiting;
        int create = (int) Math.max(0, Math.max(target - (idle + starting), min - live));
        create = (int) Math.min(create, Math.max(0L, (long) max - live));
        int excess = (int) Math.min(idle + starting - target, live - min);
        if (excess > 0) {
            List<Pod> victims = new ArrayList<>(byPhase.get(PodPhase.STARTING));
            List<Pod> idlePods = new ArrayList<>(byPhase.get(PodPhase.IDLE));
            idlePods.sort(Comparator.comparing((Pod p) -> created(p, now)).reversed());
            victims.addAll(idlePods);
            for (int i = 0; i < excess && i < victims.size(); i++) {
                delete.add(PodContract.name(victims.get(i)));
            }
        }

        SandboxPoolStatus status = new SandboxPoolStatus();
        status.setIdleReplicas(idle);
        status.setRunningReplicas(running);
        status.setStartingReplicas(starting + create);
        status.setStoppingReplicas(byPhase.get(PodPhase.STOPPING).size() + outdated);
        status.setFailedReplicas(byPhase.get(PodPhase.FAILED).size());
        status.setObservedGeneration(generation);
        String now3339 = now.toString();
        status.setConditions(List.of(
                condition(previous, "Available", idle > 0, idle > 0 ? "IdlePodsAvailable" : "NoIdlePods", now3339),
                condition(previous, "Scaling", create > 0 || excess > 0 || outdated > 0,
                        outdated > 0 ? "ReplacingOutdatedPods" : create > 0 ? "ScalingUp"
                                : excess > 0 ? "ScalingDown" : "ReplicasReady", now3339)));
        Duration requeue = nextDeadline == null ? null : Duration.between(now, nextDeadline);
        return new PoolPlan(create, delete, status, requeue);
    }

    /** True when the stored status already says what {@code next} says (ignoring transition times). */
    public static boolean sameStatus(SandboxPoolStatus stored, SandboxPoolStatus next) {
        if (stored == null) {
            return false;
        }
        return Objects.equals(stored.getIdleReplicas(), next.getIdleReplicas())
                && Objects.equals(stored.getRunningReplicas(), next.getRunningReplicas())
                && Objects.equals(stored.getStartingReplicas(), next.getStartingReplicas())
                && Objects.equals(stored.getStoppingReplicas(), next.getStoppingReplicas())
                && Objects.equals(stored.getFailedReplicas(), next.getFailedReplicas())
                && Objects.equals(stored.getObservedGeneration(), next.getObservedGeneration())
                && conditionsKey(stored).equals(conditionsKey(next));
    }

    private static List<String> conditionsKey(SandboxPoolStatus s) {
        return s.getConditions() == null ? List.of()
                : s.getConditions().stream().map(c -> c.getType() + "=" + c.getStatus() + "/" + c.getReason()).toList();
    }

    private static Condition condition(SandboxPoolStatus previous, String type, boolean value, String reason, String now) {
        String status = value ? "True" : "False";
        String since = now;
        if (previous != null && previous.getConditions() != null) {
            for (Condition c : previous.getConditions()) {
                if (type.equals(c.getType()) && status.equals(c.getStatus()) && c.getLastTransitionTime() != null) {
                    since = c.getLastTransitionTime();
                }
            }
        }
        return new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withLastTransitionTime(since)
                .build();
    }

    /** A pod whose creation time the API did not (yet) report counts as created now. */
    private static Instant created(Pod pod, Instant now) {
        String ts = pod.getMetadata().getCreationTimestamp();
        try {
            return ts == null ? now : Instant.parse(ts);
        } catch (DateTimeParseException e) {
            return now;
        }
    }

    private static int orZero(Integer v) {
        return v == null ? 0 : v;
    }
}
