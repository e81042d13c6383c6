package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolStatus;
import java.time.Duration;
import java.util.List;

/**
 * What one reconcile of a pool decided: the reconciler's return value, applied by
 * {@link PoolController}.
 *
 * @param create pods to create
 * @param delete names of pods to delete (failed, stuck starting, or idle beyond the target)
 * @param status the status to write when it differs from the stored one
 * @param requeueAfter reconcile again after this long even without events; null = on events only
 */
public record PoolPlan(int create, List<String> delete, SandboxPoolStatus status, Duration requeueAfter) {
    public PoolPlan {
        delete = List.copyOf(delete);
    }
}
