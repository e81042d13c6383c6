package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The informer caches the runtime reads instead of the API: the namespace's pool pods (label
 * {@code agentbox.io/managed-by}), its SandboxPools, and every SandboxTemplate. Handlers run on
 * fabric8's informer threads; {@link #start} returns after every cache made its first list.
 */
final class KubeCaches implements AutoCloseable {
    /** Callbacks for pod events. */
    interface PodEvents {
        void changed(Pod pod);

        void deleted(Pod pod);
    }

    private final String namespace;
    private SharedIndexInformer<Pod> pods;
    private SharedIndexInformer<SandboxPool> pools;
    private SharedIndexInformer<SandboxTemplate> templates;

    private KubeCaches(String namespace) {
        this.namespace = namespace;
    }

    /**
     * @param poolChanged called with a pool's name on any add, update or delete
     * @param templateChanged called on any template change (any pool may use it)
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when a first list fails
     */
    static KubeCaches start(KubernetesClient client, String namespace, Duration resync, PodEvents podEvents,
                            Consumer<String> poolChanged, Runnable templateChanged) {
        KubeCaches c = new KubeCaches(namespace);
        long resyncMs = resync.toMillis();
        try {
            c.pods = client.pods().inNamespace(namespace).withLabel(PodContract.MANAGED_BY, PodContract.MANAGER)
                    .inform(new ResourceEventHandler<>() {
                        @Override
                        public void onAdd(Pod pod) {
                            podEvents.changed(pod);
                        }

                        @Override
                        public void onUpdate(Pod old, Pod pod) {
                            podEvents.changed(pod);
                        }

                        @Override
                        public void onDelete(Pod pod, boolean unknownFinalState) {
                            podEvents.deleted(pod);
                        }
                    }, resyncMs);
            c.pools = client.resources(SandboxPool.class).inNamespace(namespace)
                    .inform(onAny(p -> poolChanged.accept(p.getMetadata().getName())), resyncMs);
            c.templates = client.resources(SandboxTemplate.class).inform(onAny(t -> templateChanged.run()), resyncMs);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static <T> ResourceEventHandler<T> onAny(Consumer<T> onChange) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                onChange.accept(obj);
            }

            @Override
            public void onUpdate(T old, T obj) {
                onChange.accept(obj);
            }

            @Override
            public void onDelete(T obj, boolean unknownFinalState) {
                onChange.accept(obj);
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

    /** The cluster-scoped template, or null when it does not exist (or {@code name} is null). */
    SandboxTemplate template(String name) {
        return name == null ? null : templates.getStore().getByKey(name);
    }

    @Override
    public void close() {
        for (SharedIndexInformer<?> informer : new SharedIndexInformer<?>[] {pods, pools, templates}) {
            if (informer != null) {
                informer.close();
            }
        }
    }
}
