package io.agentbox.worker.runtime.kubernetes.model;

import io.agentbox.worker.runtime.SandboxClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.util.Map;

/**
 * What a pool pod carries so that any worker (including a restarted one) can read its state from
 * the API alone. Labels: {@value #POOL}, {@value #PHASE} ({@value #PHASE_IDLE} or
 * {@value #PHASE_RUNNING}), {@value #SANDBOX_ID}, {@value #MANAGED_BY}. Annotations on a claimed
 * pod: {@value #OWNER}, {@value #CLAIMED_BY}, {@value #STARTED_AT_MS}, {@value #END_AT_MS},
 * {@value #TEMPLATE}.
 */
public final class PodContract {
    public static final String POOL = "agentbox.io/pool";
    public static final String PHASE = "agentbox.io/phase";
    public static final String SANDBOX_ID = "agentbox.io/sandbox-id";
    public static final String MANAGED_BY = "agentbox.io/managed-by";
    public static final String MANAGER = "agentbox-worker";
    public static final String PHASE_IDLE = "idle";
    public static final String PHASE_RUNNING = "running";

    public static final String OWNER = "agentbox.io/owner";
    public static final String CLAIMED_BY = "agentbox.io/claimed-by";
    public static final String STARTED_AT_MS = "agentbox.io/started-at-ms";
    public static final String END_AT_MS = "agentbox.io/end-at-ms";
    public static final String TEMPLATE = "agentbox.io/template";

    private PodContract() {}

    /** Phase of a pool pod; a pod without our phase label counts as starting. */
    public static PodPhase phase(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            return PodPhase.STOPPING;
        }
        String statusPhase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Failed".equals(statusPhase) || "Succeeded".equals(statusPhase)) {
            return PodPhase.FAILED;
        }
        if (PHASE_RUNNING.equals(label(pod, PHASE))) {
            return PodPhase.RUNNING;
        }
        return isReady(pod) && PHASE_IDLE.equals(label(pod, PHASE)) ? PodPhase.IDLE : PodPhase.STARTING;
    }

    /** Pod phase Running and condition Ready = True. */
    public static boolean isReady(Pod pod) {
        if (pod.getStatus() == null || !"Running".equals(pod.getStatus().getPhase())) {
            return false;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /**
     * A copy of {@code seen} marked as claimed by {@code claim}, keeping {@code seen}'s
     * resourceVersion so that the update fails with 409 if anyone changed the pod since.
     */
    public static Pod claimed(Pod seen, SandboxClaim claim, String workerIdentity) {
        return new PodBuilder(seen).editMetadata()
                .addToLabels(PHASE, PHASE_RUNNING)
                .addToLabels(SANDBOX_ID, claim.sandboxId())
                .addToAnnotations(Map.of(
                        OWNER, claim.owner(),
                        CLAIMED_BY, workerIdentity,
                        TEMPLATE, claim.template(),
                        STARTED_AT_MS, Long.toString(claim.startedAtMs()),
                        END_AT_MS, Long.toString(claim.endAtMs())))
                .endMetadata().build();
    }

    /** The claim a pod carries, or null when it is not claimed (or its annotations are unreadable). */
    public static SandboxClaim claimOf(Pod pod) {
        String id = label(pod, SANDBOX_ID);
        if (id == null || !PHASE_RUNNING.equals(label(pod, PHASE))) {
            return null;
        }
        Map<String, String> a = pod.getMetadata().getAnnotations() == null ? Map.of() : pod.getMetadata().getAnnotations();
        try {
            return new SandboxClaim(id, a.getOrDefault(TEMPLATE, ""), a.getOrDefault(OWNER, ""),
                    Long.parseLong(a.getOrDefault(STARTED_AT_MS, "0")), Long.parseLong(a.getOrDefault(END_AT_MS, "0")));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    public static String label(Pod pod, String key) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        return labels == null ? null : labels.get(key);
    }

    public static String name(Pod pod) {
        return pod.getMetadata().getName();
    }
}
