package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The informer caches the runtime reads instead of the API: the namespace's pool pods and pool
 * NetworkPolicies (label {@code agentbox.io/managed-by}), its SandboxPools, and every
 * SandboxTemplate. Handlers run on
 * fabric8's informer threads; {@link #start} returns after every cache made its first list.
 */
final class KubeCaches implements AutoCloseable {
    private final String namespace;
    private SharedIndexInformer<Pod> pods;
    private SharedIndexInformer<SandboxPool> pools;
    private SharedIndexInformer<SandboxTemplate> templates;
    private SharedIndexInformer<NetworkPolicy> policies;

    private KubeCaches(String namespace) {
        this.namespace = namespace;
    }

    /**
     * @param podChanged called for a pod added or updated; {@code podDeleted} for one deleted
     * @param poolChanged called with a pool's name on any add, update or delete of the pool or
     *     of its NetworkPolicy
     * @param templateChanged called on any template change (any pool may use it)
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when a first list fails
     */
    static KubeCaches start(KubernetesClient client, String namespace, Duration resync, Consumer<Pod> podChanged,
                            Consumer<Pod> podDeleted,
                            Consumer<String> poolChanged, Runnable templateChanged) {
        KubeCaches c = new KubeCaches(namespace);
        long resyncMs = resync.toMillis();
        try {
            c.pods = client.pods().inNamespace(namespace).withLabel(PodContract.MANAGED_BY, PodContract.MANAGER)
                    .inform(handler(podChanged, podDeleted), resyncMs);
            c.pools = client.resources(SandboxPool.class).inNamespace(namespace)
                    .inform(onAny((SandboxPool p) -> poolChanged.accept(p.getMetadata().getName())), resyncMs);
            c.templates = client.resources(SandboxTemplate.class)
                    .inform(onAny((SandboxTemplate t) -> templateChanged.run()), resyncMs);
            c.policies = client.network().v1().networkPolicies().inNamespace(namespace)
                    .withLabel(PodContract.MANAGED_BY, PodContract.MANAGER)
                    .inform(onAny((NetworkPolicy p) -> {
                        String pool = p.getMetadata().getLabels() == null ? null : p.getMetadata().getLabels().get(PodContract.POOL);
                        if (pool != null) {
                            poolChanged.accept(pool);
                        }
                    }), resyncMs);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static <T> ResourceEventHandler<T> onAny(Consumer<T> onChange) {
        return handler(onChange, onChange);
    }

    private static <T> ResourceEventHandler<T> handler(Consumer<T> changed, Consumer<T> deleted) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                changed.accept(obj);
            }

            @Override
            public void onUpdate(T old, T obj) {
                changed.accept(obj);
            }

            @Override
            public void onDelete(T obj, boolean unknownFinalState) {
                deleted.accept(obj);
            }
        };
    }

    Pod pod(String name) {
        return pods.getStore().getByKey(namespace + "/" + name);
    }

    /** Pods of one pool, any phase. */
    List<Pod> podsOf(String poolName) {
        return pods.getStore().list().stream().filter(p -> poolName.equals(PodContract.label(p, PodContract.POOL))).toList();
    }

    SandboxPool pool(String name) {
        return pools.getStore().getByKey(namespace + "/" + name);
    }

    /** A NetworkPolicy of the namespace carrying the managed-by label, or null. */
    NetworkPolicy policy(String name) {
        return policies.getStore().getByKey(namespace + "/" + name);
    }

    /** The cluster-scoped template, or null when it does not exist (or {@code name} is null). */
    SandboxTemplate template(String name) {
        return name == null ? null : templates.getStore().getByKey(name);
    }

    @Override
    public void close() {
        for (SharedIndexInformer<?> informer : new SharedIndexInformer<?>[] {pods, pools, templates, policies}) {
            if (informer != null) {
                informer.close();
            }
        }
    }
}
