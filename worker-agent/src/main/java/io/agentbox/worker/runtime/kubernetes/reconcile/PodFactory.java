package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.worker.runtime.kubernetes.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.util.HashMap;
import java.util.Map;

/**
 * Builds a new idle pod for a pool from its SandboxTemplate (or a default {@code sleep} pod).
 *
 * <p>Always set, whatever the template says: the pool labels, an owner reference to the pool
 * (deleting the pool deletes its pods), {@code restartPolicy: Never} (a sandbox whose container
 * ended is failed, not silently restarted on a fresh filesystem) and no service-account token
 * (code in a sandbox must not reach the Kubernetes API as the worker's namespace).
 */
public final class PodFactory {
    /** The default sandbox process: sleep, and end at once on SIGTERM. */
    static final String IDLE_LOOP = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done";

    private PodFactory() {}

    /** @param template the pool's template, or null to use {@code defaultImage} */
    public static Pod newPod(SandboxPool pool, SandboxTemplate template, String defaultImage) {
        PodTemplateSpec source = template == null || template.getSpec() == null ? null : template.getSpec().getPodTemplate();
        Map<String, String> labels = new HashMap<>();
        Map<String, String> annotations = new HashMap<>();
        PodSpec spec;
        if (source != null && source.getSpec() != null && !source.getSpec().getContainers().isEmpty()) {
            if (source.getMetadata() != null) {
                if (source.getMetadata().getLabels() != null) {
                    labels.putAll(source.getMetadata().getLabels());
                }
                if (source.getMetadata().getAnnotations() != null) {
                    annotations.putAll(source.getMetadata().getAnnotations());
                }
            }
            spec = new PodSpecBuilder(source.getSpec()).build();
        } else {
            spec = new PodSpecBuilder().addToContainers(new ContainerBuilder().withName("sandbox").withImage(defaultImage)
                    .withCommand("/bin/sh", "-c", IDLE_LOOP).build()).build();
        }
        spec.setRestartPolicy("Never");
        spec.setAutomountServiceAccountToken(false);
        spec.setEnableServiceLinks(false);
        String poolName = pool.getMetadata().getName();
        labels.put(PodContract.POOL, poolName);
        labels.put(PodContract.PHASE, PodContract.PHASE_IDLE);
        labels.put(PodContract.MANAGED_BY, PodContract.MANAGER);
        return new PodBuilder()
                .withNewMetadata()
                .withGenerateName(poolName + "-")
                .withNamespace(pool.getMetadata().getNamespace())
                .withLabels(labels)
                .withAnnotations(annotations)
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                        .withKind(pool.getKind()).withName(poolName).withUid(pool.getMetadata().getUid()).build())
                .endMetadata()
                .withSpec(spec)
                .build();
    }

    /** Name of the container commands run in: the template's first container. */
    public static String sandboxContainer(SandboxTemplate template) {
        PodTemplateSpec source = template == null || template.getSpec() == null ? null : template.getSpec().getPodTemplate();
        if (source != null && source.getSpec() != null && !source.getSpec().getContainers().isEmpty()) {
            return source.getSpec().getContainers().get(0).getName();
        }
        return "sandbox";
    }
}
