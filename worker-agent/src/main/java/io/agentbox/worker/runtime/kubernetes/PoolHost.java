package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.kubernetes.exec.PodExec;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.List;

/**
 * What one {@link KubePool} may ask of the runtime holding it, and nothing more: cached reads of
 * its pods, the process-wide hand-out set, the API writes it causes (claims, deletes, its
 * SandboxPool), a reconcile of itself, and the settings its sandboxes need. Bound to one pool
 * by {@link KubernetesRuntime}, so a pool cannot reach another pool's state or the engine.
 *
 * <p>Every method may be called from any thread. None waits on the API: writes are queued.
 */
interface PoolHost {
    /** Namespace of the pool's pods. */
    String namespace();

    /** Name of the sandbox container in the pool's pods (from its SandboxTemplate, else the default pod's). */
    String container();

    /** Runs commands in pods. */
    PodExec exec();

    /** How long a sandbox's first command waits for its claim to be recorded. */
    Duration confirmTimeout();

    /**
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when this worker may not claim: it is
     *     shut down or not the leader
     */
    void requireLeader();

    /** The pod as the informer cache has it, or null. */
    Pod cachedPod(String podName);

    /** The pool's pods as the informer cache has them. */
    List<Pod> cachedPods();

    /** Marks a pod handed out to a sandbox (or to a deletion); false when it already was. Process-wide. */
    boolean handOut(String podName);

    boolean isHandedOut(String podName);

    /** Pods that could still start before the SandboxPool's {@code maxReplicas}; 0 without one. */
    int headroom();

    /** Queues the API write recording the claim of {@code seen} by {@code sandbox} ({@link ClaimWriter}). */
    void recordClaim(KubePool pool, KubeSandbox sandbox, Pod seen);

    /** Queues the deletion of a pod (logged, not retried, when it fails: the next reconcile cleans up). */
    void deletePod(String podName);

    /** Writes the pool's SandboxPool: {@code replicas} and the template's image, limits and network. */
    void writePoolResource(Template template, int replicas);

    /** Asks for a reconcile of this pool (coalesced; never waits for it). */
    void requestReconcile();

    /** The pool is closed: the runtime forgets it (pods and SandboxPool stay). */
    void forgetPool();
}
