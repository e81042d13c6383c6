package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.reconcile.PoolNetworkPolicy;
import io.agentbox.worker.runtime.kubernetes.reconcile.Revision;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a pool's NetworkPolicy what {@link PoolNetworkPolicy} asks for: creates it, updates it
 * when its {@link Revision} differs (the network mode changed), deletes it for {@code host}.
 * Reads the informer cache; a write that fails (a 409 from a stale cache, the API away) is left
 * for the next reconcile (a failed write makes the reconcile a failure, retried with backoff).
 * Runs on reconcile threads only, one pool at a time.
 */
final class PolicyWriter {
    private static final Logger log = LoggerFactory.getLogger(PolicyWriter.class);

    private final KubernetesClient client;
    private final KubernetesRuntime runtime;

    PolicyWriter(KubernetesClient client, KubernetesRuntime runtime) {
        this.client = client;
        this.runtime = runtime;
    }

    /** @return true when the policy is as wanted (or was just written), false when a write failed */
    boolean apply(SandboxPool pool) {
        String poolName = pool.getMetadata().getName();
        NetworkPolicy want = PoolNetworkPolicy.of(pool);
        NetworkPolicy have = runtime.caches().policy(PoolNetworkPolicy.name(poolName));
        var policies = client.network().v1().networkPolicies().inNamespace(runtime.config().namespace());
        try {
            if (want == null) {
                if (have != null) {
                    policies.withName(have.getMetadata().getName()).delete();
                    log.info("pool {}: network host, NetworkPolicy deleted", poolName);
                }
            } else if (have == null) {
                policies.resource(want).create();
                log.info("pool {}: NetworkPolicy {} created", poolName, want.getMetadata().getName());
            } else if (!Objects.equals(Revision.carried(have.getMetadata()), Revision.carried(want.getMetadata()))) {
                NetworkPolicy next = new NetworkPolicyBuilder(want).withMetadata(new ObjectMetaBuilder(want.getMetadata())
                        .withResourceVersion(have.getMetadata().getResourceVersion()).build()).build();
                policies.resource(next).update();
                log.info("pool {}: NetworkPolicy {} updated", poolName, want.getMetadata().getName());
            }
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                // the cache lagged behind the API: its event for the newer policy brings another reconcile
                log.debug("pool {}: NetworkPolicy write conflicted: {}", poolName, e.getMessage());
                return true;
            }
            log.warn("pool {}: cannot write its NetworkPolicy: {}", poolName, e.getMessage());
            return false;
        }
    }

    /** Deletes the policy of a pool that no longer exists, if the cache still shows one. */
    void removeOrphan(String poolName) {
        NetworkPolicy have = runtime.caches().policy(PoolNetworkPolicy.name(poolName));
        if (have == null) {
            return;
        }
        try {
            client.network().v1().networkPolicies().inNamespace(runtime.config().namespace())
                    .withName(have.getMetadata().getName()).delete();
        } catch (KubernetesClientException e) {
            log.warn("pool {} is gone; cannot delete its NetworkPolicy: {}", poolName, e.getMessage());
        }
    }
}
