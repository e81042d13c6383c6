package io.agentbox.worker.runtime.kubernetes.model;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/**
 * Observed state of a {@link SandboxPool}, written by the leader worker's reconciler. Counts are
 * pods by phase (see {@code PodPhase}); conditions: {@code Available} (an idle pod exists),
 * {@code Scaling} (pods are being created or deleted).
 */
public class SandboxPoolStatus {
    private Integer idleReplicas;
    private Integer runningReplicas;
    private Integer startingReplicas;
    private Integer stoppingReplicas;
    private Integer failedReplicas;
    private Long observedGeneration;
    private List<Condition> conditions = new ArrayList<>();

    public Integer getIdleReplicas() {
        return idleReplicas;
    }

    public void setIdleReplicas(Integer idleReplicas) {
        this.idleReplicas = idleReplicas;
    }

    public Integer getRunningReplicas() {
        return runningReplicas;
    }

    public void setRunningReplicas(Integer runningReplicas) {
        this.runningReplicas = runningReplicas;
    }

    public Integer getStartingReplicas() {
        return startingReplicas;
    }

    public void setStartingReplicas(Integer startingReplicas) {
        this.startingReplicas = startingReplicas;
    }

    public Integer getStoppingReplicas() {
        return stoppingReplicas;
    }

    public void setStoppingReplicas(Integer stoppingReplicas) {
        this.stoppingReplicas = stoppingReplicas;
    }

    public Integer getFailedReplicas() {
        return failedReplicas;
    }

    public void setFailedReplicas(Integer failedReplicas) {
        this.failedReplicas = failedReplicas;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }
}
