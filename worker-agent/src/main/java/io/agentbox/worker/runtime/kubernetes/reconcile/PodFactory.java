package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds a new idle pod for a pool from its SandboxTemplate (or a default {@code sleep} pod) and
 * the pool's {@code spec.sandbox} (the hub template's image, limits and network).
 *
 * <p>Always set, whatever the SandboxTemplate says: the pool labels, an owner reference to the
 * pool (deleting the pool deletes its pods), {@code restartPolicy: Never} (a sandbox whose
 * container ended is failed, not silently restarted on a fresh filesystem), no service-account
 * token (code in a sandbox must not reach the Kubernetes API as the worker's namespace), and the
 * {@value Revision#ANNOTATION} fingerprint of everything else, by which the reconciler replaces
 * idle pods that no longer match their pool.
 *
 * <p>From {@code spec.sandbox}, on the sandbox container (the first): a non-empty image replaces
 * the SandboxTemplate's; {@code cpuCount} ({@code "N"} CPUs), {@code memoryMb} ({@code "NMi"})
 * and {@code diskSizeMb} ({@code "NMi"} of {@code ephemeral-storage}) become its limits, and its
 * requests unless the SandboxTemplate asks for less (an admin may overcommit idle pods); network
 * {@code host} sets {@code hostNetwork: true}, any other network forces it off. The PID limit
 * cannot be set per pod (the kubelet's {@code podPidsLimit} applies to every pod of a node), so it
 * is only recorded in {@value #PIDS_LIMIT}.
 */
public final class PodFactory {
    /** The default sandbox process: sleep, and end at once on SIGTERM. */
    static final String IDLE_LOOP = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done";
    /** Annotation recording the template's PID limit for operators; not enforced by Kubernetes. */
    public static final String PIDS_LIMIT = "agentbox.io/pids-limit";
    /** Annotation recording the template's network mode. */
    public static final String NETWORK = "agentbox.io/network";

    private PodFactory() {}

    /** @param template the pool's template, or null to use {@code defaultImage} */
    public static Pod newPod(SandboxPool pool, SandboxTemplate template, String defaultImage) {
        PodTemplateSpec source = template == null || template.getSpec() == null ? null : template.getSpec().getPodTemplate();
        SandboxSettings settings = pool.getSpec().getSandbox() == null ? new SandboxSettings() : pool.getSpec().getSandbox();
        Map<String, String> labels = new TreeMap<>();
        Map<String, String> annotations = new TreeMap<>();
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
        Container sandbox = new ContainerBuilder(spec.getContainers().get(0)).build();
        spec.getContainers().set(0, sandbox);
        if (settings.getImage() != null && !settings.getImage().isEmpty()) {
            sandbox.setImage(settings.getImage());
        }
        applyLimits(sandbox, settings);
        boolean hostNetwork = SandboxSettings.HOST.equals(settings.networkOrDefault());
        spec.setHostNetwork(hostNetwork);
        if (hostNetwork && spec.getDnsPolicy() == null) {
            spec.setDnsPolicy("ClusterFirstWithHostNet"); // else a host-network pod resolves with the node's resolv.conf
        }
        spec.setRestartPolicy("Never");
        spec.setAutomountServiceAccountToken(false);
        spec.setEnableServiceLinks(false);
        if (settings.getPidsLimit() != null && settings.getPidsLimit() > 0) {
            annotations.put(PIDS_LIMIT, Integer.toString(settings.getPidsLimit()));
        }
        annotations.put(NETWORK, settings.networkOrDefault());
        String poolName = pool.getMetadata().getName();
        labels.put(PodContract.POOL, poolName);
        labels.put(PodContract.PHASE, PodContract.PHASE_IDLE);
        labels.put(PodContract.MANAGED_BY, PodContract.MANAGER);
        annotations.remove(Revision.ANNOTATION);
        annotations.put(Revision.ANNOTATION, Revision.of(labels, annotations, spec));
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

    /** Sets each limit the settings give (0 or null = leave the container's), with a request no larger. */
    private static void applyLimits(Container c, SandboxSettings s) {
        ResourceRequirements r = c.getResources() == null ? new ResourceRequirements() : c.getResources();
        Map<String, Quantity> limits = new TreeMap<>(r.getLimits() == null ? Map.of() : r.getLimits());
        Map<String, Quantity> requests = new TreeMap<>(r.getRequests() == null ? Map.of() : r.getRequests());
        limit(limits, requests, "cpu", s.getCpuCount(), "");
        limit(limits, requests, "memory", s.getMemoryMb(), "Mi");
        limit(limits, requests, "ephemeral-storage", s.getDiskSizeMb(), "Mi");
        if (limits.isEmpty() && requests.isEmpty() && c.getResources() == null) {
            return;
        }
        r.setLimits(limits);
        r.setRequests(requests);
        c.setResources(r);
    }

    private static void limit(Map<String, Quantity> limits, Map<String, Quantity> requests, String resource, Integer amount,
                              String unit) {
        if (amount == null || amount <= 0) {
            return;
        }
        Quantity max = new Quantity(amount + unit);
        limits.put(resource, max);
        Quantity asked = requests.get(resource);
        if (asked == null || asked.getNumericalAmount().compareTo(max.getNumericalAmount()) > 0) {
            requests.put(resource, max); // the API refuses a request above its limit
        }
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
