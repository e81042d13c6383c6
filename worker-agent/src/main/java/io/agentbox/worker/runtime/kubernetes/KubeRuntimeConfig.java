package io.agentbox.worker.runtime.kubernetes;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the {@code kubernetes} runtime. Build with {@link #defaults} and adjust with the
 * {@code with*} methods; every value is validated at construction.
 *
 * @param namespace namespace of the pools, their pods and the leader lease
 * @param identity this worker replica (the pod name in a cluster); recorded on claimed pods and in the lease
 * @param defaultImage image of the sandbox container for pools whose SandboxTemplate does not exist
 * @param leaseName name of the coordination.k8s.io Lease that elects the claiming replica
 * @param leaseDuration how long a leader's lease is valid without renewal
 * @param renewDeadline how long the leader keeps trying to renew before it steps down (< leaseDuration)
 * @param retryPeriod how often candidates try to acquire and the leader renews; also the wait
 *     before the first retry of a failed reconcile
 * @param resync how often every pool is reconciled even without events; also the longest wait
 *     between retries of a pool whose reconciles keep failing
 * @param confirmTimeout how long a sandbox's first command waits for its claim to be recorded
 * @param startupTimeout how long a new pod may take to become ready before it is replaced
 * @param maxReadyPerPool limit of a pool's ready queue (and so of idle pods it can hand out)
 * @param claimWriters threads writing claim labels and deleting released pods
 * @param maxPendingWrites queued writes beyond which claims are refused with RESOURCE_EXHAUSTED
 */
public record KubeRuntimeConfig(String namespace, String identity, String defaultImage, String leaseName,
                                Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, Duration resync,
                                Duration confirmTimeout, Duration startupTimeout, int maxReadyPerPool, int claimWriters,
                                int maxPendingWrites) {
    public static final String DEFAULT_IMAGE = "debian:bookworm-slim";
    public static final String DEFAULT_LEASE = "agentbox-worker";

    public KubeRuntimeConfig {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(defaultImage, "defaultImage");
        Objects.requireNonNull(leaseName, "leaseName");
        if (namespace.isBlank() || identity.isBlank() || leaseName.isBlank()) {
            throw new IllegalArgumentException("namespace, identity and lease name must not be empty");
        }
        for (Duration d : new Duration[] {leaseDuration, renewDeadline, retryPeriod, resync, confirmTimeout, startupTimeout}) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("durations must be positive");
            }
        }
        if (renewDeadline.compareTo(leaseDuration) >= 0 || retryPeriod.compareTo(renewDeadline) >= 0) {
            throw new IllegalArgumentException("need retryPeriod < renewDeadline < leaseDuration, got " + retryPeriod
                    + " / " + renewDeadline + " / " + leaseDuration);
        }
        if (maxReadyPerPool <= 0 || claimWriters <= 0 || maxPendingWrites <= 0) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }

    /** Production defaults: lease 15 s / renew 10 s / retry 2 s, resync 30 s, confirm 30 s, startup 120 s. */
    public static KubeRuntimeConfig defaults(String namespace, String identity) {
        return new KubeRuntimeConfig(namespace, identity, DEFAULT_IMAGE, DEFAULT_LEASE, Duration.ofSeconds(15),
                Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofSeconds(30),
                Duration.ofSeconds(120), 10_000, 16, 4096);
    }

    public KubeRuntimeConfig withDefaultImage(String image) {
        return new KubeRuntimeConfig(namespace, identity, image, leaseName, leaseDuration, renewDeadline, retryPeriod,
                resync, confirmTimeout, startupTimeout, maxReadyPerPool, claimWriters, maxPendingWrites);
    }

    public KubeRuntimeConfig withLeaderTimings(Duration lease, Duration renew, Duration retry) {
        return new KubeRuntimeConfig(namespace, identity, defaultImage, leaseName, lease, renew, retry,
                resync, confirmTimeout, startupTimeout, maxReadyPerPool, claimWriters, maxPendingWrites);
    }

    public KubeRuntimeConfig withResync(Duration every) {
        return new KubeRuntimeConfig(namespace, identity, defaultImage, leaseName, leaseDuration, renewDeadline,
                retryPeriod, every, confirmTimeout, startupTimeout, maxReadyPerPool, claimWriters, maxPendingWrites);
    }
}
