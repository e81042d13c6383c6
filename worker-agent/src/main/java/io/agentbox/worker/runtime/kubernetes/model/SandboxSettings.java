package io.agentbox.worker.runtime.kubernetes.model;

import java.util.Objects;

/**
 * What the hub's template says about a pool's sandboxes ({@code SandboxPool.spec.sandbox}). The
 * worker writes it from the hub template on every template push, like {@code replicas}; edits by
 * hand are overwritten. Pods are built from it over the pool's SandboxTemplate, if any.
 *
 * <ul>
 *   <li>{@code image}: normalised OCI reference of the sandbox container; empty or absent = the
 *       SandboxTemplate's image, else the worker's {@code --sandbox-image};
 *   <li>{@code cpuCount} (CPUs), {@code memoryMb} (MiB), {@code diskSizeMb} (MiB of
 *       ephemeral storage): limits of the sandbox container; 0 or absent = none set;
 *   <li>{@code pidsLimit}: recorded as a pod annotation only, since Kubernetes sets PID limits
 *       per node (kubelet {@code podPidsLimit}), not per pod;
 *   <li>{@code network}: {@code isolated} (NetworkPolicy: internet only), {@code none}
 *       (NetworkPolicy: nothing in or out) or {@code host} (the node's network).
 * </ul>
 */
public class SandboxSettings {
    public static final String ISOLATED = "isolated";
    public static final String NONE = "none";
    public static final String HOST = "host";

    private String image;
    private Integer cpuCount;
    private Integer memoryMb;
    private Integer diskSizeMb;
    private Integer pidsLimit;
    private String network;

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public Integer getCpuCount() {
        return cpuCount;
    }

    public void setCpuCount(Integer cpuCount) {
        this.cpuCount = cpuCount;
    }

    public Integer getMemoryMb() {
        return memoryMb;
    }

    public void setMemoryMb(Integer memoryMb) {
        this.memoryMb = memoryMb;
    }

    public Integer getDiskSizeMb() {
        return diskSizeMb;
    }

    public void setDiskSizeMb(Integer diskSizeMb) {
        this.diskSizeMb = diskSizeMb;
    }

    public Integer getPidsLimit() {
        return pidsLimit;
    }

    public void setPidsLimit(Integer pidsLimit) {
        this.pidsLimit = pidsLimit;
    }

    public String getNetwork() {
        return network;
    }

    public void setNetwork(String network) {
        this.network = network;
    }

    /** The network mode, {@link #ISOLATED} when absent or empty. */
    public String networkOrDefault() {
        return network == null || network.isEmpty() ? ISOLATED : network;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SandboxSettings s && Objects.equals(image, s.image) && Objects.equals(cpuCount, s.cpuCount)
                && Objects.equals(memoryMb, s.memoryMb) && Objects.equals(diskSizeMb, s.diskSizeMb)
                && Objects.equals(pidsLimit, s.pidsLimit) && Objects.equals(network, s.network);
    }

    @Override
    public int hashCode() {
        return Objects.hash(image, cpuCount, memoryMb, diskSizeMb, pidsLimit, network);
    }

    @Override
    public String toString() {
        return "image=" + image + " cpuCount=" + cpuCount + " memoryMb=" + memoryMb + " diskSizeMb=" + diskSizeMb
                + " pidsLimit=" + pidsLimit + " network=" + network;
    }
}
