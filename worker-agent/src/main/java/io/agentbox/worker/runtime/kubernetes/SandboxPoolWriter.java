package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolSpec;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the SandboxPool of a hub template: creates it, or sets only its replicas and
 * {@code spec.sandbox} (from the hub template) when it exists, since admins may tune the rest. A
 * conflict (the reconciler wrote the status meanwhile) is retried on the new version, at most
 * {@link #MAX_WRITES} writes in all; other failures are logged and left to the next template
 * snapshot from the hub. Runs on the caller's thread (template pushes, never the claim path).
 */
final class SandboxPoolWriter {
    /** Attempts at writing a SandboxPool's replicas when other writers conflict. */
    static final int MAX_WRITES = 5;
    private static final Logger log = LoggerFactory.getLogger(SandboxPoolWriter.class);

    private final KubernetesClient client;
    private final String namespace;

    SandboxPoolWriter(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /**
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when the template's settings cannot
     *     be turned into a pod ({@link KubernetesRuntime#settingsOf}); nothing is written then
     */
    void write(String poolName, Template template, int replicas) {
        var resources = client.resources(SandboxPool.class).inNamespace(namespace);
        SandboxSettings settings = KubernetesRuntime.settingsOf(template);
        for (int attempt = 1; ; attempt++) {
            try {
                SandboxPool existing = resources.withName(poolName).get();
                if (existing == null) {
                    SandboxPool created = new SandboxPool();
                    created.setMetadata(new ObjectMetaBuilder().withName(poolName).withNamespace(namespace)
                            .addToLabels(PodContract.MANAGED_BY, PodContract.MANAGER).build());
                    SandboxPoolSpec spec = new SandboxPoolSpec();
                    spec.setTemplateRef(poolName);
                    spec.setReplicas(replicas);
                    spec.setSandbox(settings);
                    created.setSpec(spec);
                    resources.resource(created).create();
                } else if (existing.getSpec().getReplicas() == null || existing.getSpec().getReplicas() != replicas
                        || !settings.equals(existing.getSpec().getSandbox())) {
                    existing.getSpec().setReplicas(replicas);
                    existing.getSpec().setSandbox(settings);
                    resources.resource(existing).update();
                }
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= MAX_WRITES) {
                    // the API is away; the next template snapshot from the hub writes again
                    log.warn("pool {}: cannot write SandboxPool: {}", poolName, e.getMessage());
                    return;
                }
            }
        }
    }
}
