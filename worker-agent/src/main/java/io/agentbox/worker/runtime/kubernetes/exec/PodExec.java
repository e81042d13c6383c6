package io.agentbox.worker.runtime.kubernetes.exec;

import java.util.List;

/**
 * Runs a command in a pod's container (the Kubernetes exec API in production; tests substitute
 * a local shell because the mock API server cannot exec).
 */
public interface PodExec {

    /**
     * Starts {@code argv} (no shell is added) and returns it as a {@link Process}: stdout, stderr,
     * stdin when {@code stdin}, and the exit code.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the exec cannot be opened
     */
    Process exec(String namespace, String pod, String container, List<String> argv, boolean stdin);
}
