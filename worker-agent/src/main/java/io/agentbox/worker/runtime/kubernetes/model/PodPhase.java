package io.agentbox.worker.runtime.kubernetes.model;

/** Where a pool pod is in its life, derived from its labels and status ({@link PodContract#phase}). */
public enum PodPhase {
    /** Created, not yet Running and Ready. */
    STARTING,
    /** Ready and unclaimed: may be handed out. */
    IDLE,
    /** Claimed by a sandbox (label {@code agentbox.io/phase=running}). */
    RUNNING,
    /** Being deleted (deletionTimestamp set). */
    STOPPING,
    /** Its containers ended (pod phase Failed or Succeeded). */
    FAILED
}
