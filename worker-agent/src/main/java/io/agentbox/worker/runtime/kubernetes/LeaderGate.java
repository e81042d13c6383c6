package io.agentbox.worker.runtime.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election on a coordination.k8s.io Lease: only the leader reconciles pools and claims
 * pods. fabric8's elector stops after losing the lease once, so this gate keeps contending
 * until closed. Callbacks run on the elector's thread, start and stop alternating.
 */
final class LeaderGate implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaderGate.class);

    private final KubernetesClient client;
    private final KubeRuntimeConfig config;
    private final Runnable onStart;
    private final Runnable onStop;
    private volatile boolean leading;
    private volatile boolean closed;
    private volatile CompletableFuture<?> running;

    LeaderGate(KubernetesClient client, KubeRuntimeConfig config, Runnable onStart, Runnable onStop) {
        this.client = client;
        this.config = config;
        this.onStart = onStart;
        this.onStop = onStop;
    }

    boolean isLeader() {
        return leading && !closed;
    }

    synchronized void start() {
        if (closed) {
            return;
        }
        var elector = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
                .withName(config.leaseName())
                .withLock(new LeaseLock(config.namespace(), config.leaseName(), config.identity()))
                .withLeaseDuration(config.leaseDuration())
                .withRenewDeadline(config.renewDeadline())
                .withRetryPeriod(config.retryPeriod())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(new LeaderCallbacks(this::started, this::stopped,
                        leader -> log.info("namespace {}: leader is {}", config.namespace(), leader)))
                .build()).build();
        running = elector.start();
        running.whenComplete((ok, error) -> {
            if (!closed) {
                log.info("{} left the leader election ({}); contending again", config.identity(),
                        error == null ? "lease lost" : error.toString());
                start();
            }
        });
    }

    private void started() {
        leading = true;
        log.info("{} leads namespace {}", config.identity(), config.namespace());
        onStart.run();
    }

    private void stopped() {
        leading = false;
        onStop.run();
    }

    /** Steps down (releasing the lease) and stops contending. */
    @Override
    public void close() {
        CompletableFuture<?> f;
        synchronized (this) {
            closed = true;
            leading = false;
            f = running;
        }
        if (f != null) {
            f.cancel(true);
        }
    }
}
