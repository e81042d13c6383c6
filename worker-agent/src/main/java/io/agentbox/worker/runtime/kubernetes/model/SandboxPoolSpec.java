package io.agentbox.worker.runtime.kubernetes.model;

/**
 * Desired state of a {@link SandboxPool}.
 *
 * <p>{@code replicas} is the number of idle (warm, ready) pods to keep; claimed pods do not
 * count against it, so every claim triggers a refill. {@code minReplicas} and {@code maxReplicas}
 * bound the pool's pods of every phase: the reconciler keeps at least {@code minReplicas} pods
 * and never creates one past {@code maxReplicas} (claims then wait for a release).
 * {@code sandbox} is what the hub template says about the pods (image, limits, network).
 */
public class SandboxPoolSpec {
    /** Name of the cluster-scoped {@link SandboxTemplate}; absent template = the worker's default pod. */
    private String templateRef;
    private Integer replicas;
    private Integer minReplicas;
    private Integer maxReplicas;
    /** Image, limits and network from the hub template; absent = the SandboxTemplate (or default pod) alone, isolated. */
    private SandboxSettings sandbox;

    public String getTemplateRef() {
        return templateRef;
    }

    public void setTemplateRef(String templateRef) {
        this.templateRef = templateRef;
    }

    public Integer getReplicas() {
        return replicas;
    }

    public void setReplicas(Integer replicas) {
        this.replicas = replicas;
    }

    public Integer getMinReplicas() {
        return minReplicas;
    }

    public void setMinReplicas(Integer minReplicas) {
        this.minReplicas = minReplicas;
    }

    public Integer getMaxReplicas() {
        return maxReplicas;
    }

    public void setMaxReplicas(Integer maxReplicas) {
        this.maxReplicas = maxReplicas;
    }

    public SandboxSettings getSandbox() {
        return sandbox;
    }

    public void setSandbox(SandboxSettings sandbox) {
        this.sandbox = sandbox;
    }
}
