package io.agentbox.worker.runtime.kubernetes.exec;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.grpc.Status;
import java.util.List;

/** {@link PodExec} over the pod exec subresource (a WebSocket per command, no TTY). */
public final class Fabric8PodExec implements PodExec {
    private final KubernetesClient client;

    public Fabric8PodExec(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Process exec(String namespace, String pod, String container, List<String> argv, boolean stdin) {
        PodResource resource = client.pods().inNamespace(namespace).withName(pod);
        String[] command = argv.toArray(String[]::new);
        try {
            ExecWatch watch = stdin
                    ? resource.inContainer(container).redirectingInput().redirectingOutput().redirectingError().exec(command)
                    : resource.inContainer(container).redirectingOutput().redirectingError().exec(command);
            return new ExecWatchProcess(watch, stdin);
        } catch (KubernetesClientException e) {
            throw Status.UNAVAILABLE.withDescription("cannot exec in pod " + namespace + "/" + pod + ": " + e.getMessage())
                    .withCause(e).asRuntimeException();
        }
    }
}
