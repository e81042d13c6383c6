package io.agentbox.worker.runtime.kubernetes.model;

/** API group and version of the AgentBox custom resources. */
public final class Crds {
    public static final String GROUP = "agentbox.io";
    public static final String VERSION = "v1alpha1";

    private Crds() {}
}
