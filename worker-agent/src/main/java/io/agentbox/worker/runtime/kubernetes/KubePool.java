package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.PoolSignal;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.kubernetes.claim.ReadyQueue;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.fabric8.kubernetes.api.model.Pod;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One SandboxPool as this worker sees it: the ready queue the pod informer feeds, and the
 * sandboxes bound to its pods. It reaches the rest of the runtime only through its
 * {@link PoolHost} (cached reads, queued API writes, a reconcile of itself).
 *
 * <p>A pod is handed out at most once per worker: it leaves the ready queue by {@code poll} and
 * is recorded in the process's handed-out set before a sandbox is bound to it; informer events
 * never requeue a handed-out pod. Across workers, the leader lease plus the optimistic claim
 * write keep two sandboxes from ever running in one pod.
 *
 * <p>Waiting: a claim that finds no idle pod counts as demand (the reconciler starts pods for it)
 * and waits on the pool's {@link PoolSignal}, which the informer path bumps when it queues a
 * newly idle pod, and retire, close and a lost leadership bump to fail waiting claims.
 */
public final class KubePool implements RuntimePool {
    private final PoolHost host;
    private final String name;
    private final ReadyQueue ready;
    private final PoolContext context;
    /** Sandboxes by the pod they are bound to (confirmed or not). */
    private final Map<String, KubeSandbox> byPod = new ConcurrentHashMap<>();
    /** Claims that found no idle pod and asked without waiting: sandbox id -> {@link System#nanoTime} of its last ask. */
    private final Map<String, Long> waiting = new ConcurrentHashMap<>();
    /** Claims blocked in {@link #claim(ClaimRequest, Duration)} until a pod is idle for them. */
    private final Set<String> blocked = ConcurrentHashMap.newKeySet();
    private final PoolSignal signal = new PoolSignal();
    /** Set by retire and close, cleared when the template comes back ({@link #reopen}). */
    private volatile boolean retired;
    private final int waitingLimit;
    private volatile Template template;

    KubePool(PoolHost host, Template template, int readyLimit, PoolContext context) {
        this.host = host;
        this.name = template.getName();
        this.template = template;
        this.ready = new ReadyQueue(readyLimit);
        this.waitingLimit = readyLimit;
        this.context = context;
    }

    /** Pool (and SandboxPool resource) name: the template's name. */
    public String name() {
        return name;
    }

    @Override
    public Template template() {
        return template;
    }

    String namespace() {
        return host.namespace();
    }

    String container() {
        return host.container();
    }

    /**
     * Takes the template's new pool size, image, limits and network: the SandboxPool is
     * rewritten, the reconciler replaces idle pods built from the old ones and updates the
     * NetworkPolicy; claimed pods keep theirs until released.
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT (and nothing changes) when the new
     *     image, limits or network cannot be turned into a pod
     */
    @Override
    public void update(Template next) {
        KubernetesRuntime.settingsOf(next);
        template = next;
        host.writePoolResource(next, next.getPoolSize());
    }

    /**
     * A claim that asked without waiting ({@link #claim(SandboxClaim)}) and found no idle pod
     * stays demand this long after it last asked; a blocked claim stays demand while it waits.
     */
    static final Duration WAIT_TTL = Duration.ofSeconds(2);

    /**
     * Names the sandbox and binds it to an idle pod; when none is idle, counts as demand and
     * waits for the informer to queue one, up to {@code wait}.
     *
     * @throws io.grpc.StatusRuntimeException RESOURCE_EXHAUSTED when no pod became idle in time;
     *     UNAVAILABLE when this worker may not claim (not the leader, shut down) or the pool was
     *     retired or closed; CANCELLED when the thread is interrupted
     */
    @Override
    public RuntimeSandbox claim(ClaimRequest request, Duration wait) {
        SandboxClaim claim = new SandboxClaim(SandboxIds.newSandboxId(context.clusterId()), name, request.owner(),
                request.startedAtMs(), request.endAtMs());
        long deadline = System.nanoTime() + wait.toNanos();
        boolean counted = false;
        try {
            while (true) {
                long seen = signal.version();
                if (retired) {
                    throw Status.UNAVAILABLE.withDescription("the pool of template '" + name + "' on cluster "
                            + context.clusterId() + " was closed").asRuntimeException();
                }
                RuntimeSandbox s = bindIdle(claim);
                if (s != null) {
                    return s;
                }
                if (!counted && (counted = countBlocked(claim.sandboxId()))) {
                    host.requestReconcile();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw ErrorReason.NO_CAPACITY.exception(Status.Code.RESOURCE_EXHAUSTED, "no idle sandbox of template '"
                            + name + "' on cluster " + context.clusterId() + " within " + wait.toSeconds() + " s");
                }
                try {
                    signal.await(seen, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw Status.CANCELLED.withDescription("interrupted while waiting for a sandbox").asRuntimeException();
                }
            }
        } finally {
            if (counted) {
                blocked.remove(claim.sandboxId());
            }
        }
    }

    /** Counts a blocked claim as demand unless the pool already has as much as its ready queue could serve. */
    private boolean countBlocked(String sandboxId) {
        if (waiting.size() + blocked.size() >= waitingLimit) {
            return false;
        }
        return blocked.add(sandboxId);
    }

    /** Wakes every blocked claim to look again (leadership lost, runtime shut down). */
    void wake() {
        signal.signal();
    }

    /** The pool is opened (again, after a retire) for {@code next}: claims may wait here again. */
    void reopen(Template next) {
        template = next;
        retired = false;
    }

    /**
     * Pops an idle pod for the claim, without waiting. When none is idle the claim is recorded
     * as waiting (at most {@code readyLimit} claims at once, the most pods the ready queue could
     * hand out), and the reconciler starts pods for waiting claims; the caller asks again with the
     * same claim.
     *
     * @return the sandbox, or null when no pod is idle right now
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when this worker may not claim (for
     *     example it is not the leader)
     */
    public RuntimeSandbox claim(SandboxClaim claim) {
        RuntimeSandbox sandbox = bindIdle(claim);
        if (sandbox == null && awaitPod(claim.sandboxId())) {
            host.requestReconcile();
        }
        return sandbox;
    }

    /** Binds the claim to the oldest idle pod; null when none is idle. */
    private RuntimeSandbox bindIdle(SandboxClaim claim) {
        host.requireLeader();
        Pod seen = popIdle();
        if (seen == null) {
            return null;
        }
        waiting.remove(claim.sandboxId());
        KubeSandbox sandbox = new KubeSandbox(claim, this, host.exec(), host.confirmTimeout(), PodContract.name(seen));
        bind(sandbox);
        host.recordClaim(this, sandbox, seen);
        host.requestReconcile();
        return sandbox;
    }

    /** Records (or refreshes) a waiting claim; true when it was not waiting before. */
    private boolean awaitPod(String sandboxId) {
        long now = System.nanoTime();
        if (waiting.size() + blocked.size() >= waitingLimit && !waiting.containsKey(sandboxId)) {
            return false; // demand beyond what the ready queue could serve is not counted
        }
        return waiting.put(sandboxId, now) == null;
    }

    /**
     * Claims waiting for a pod: the blocked ones, and those that asked without waiting within
     * {@link #WAIT_TTL} (the ones that gave up are dropped).
     */
    int waitingClaims() {
        long oldest = System.nanoTime() - WAIT_TTL.toNanos();
        waiting.values().removeIf(askedAt -> askedAt - oldest < 0);
        return waiting.size() + blocked.size();
    }

    /** Pops the oldest pod that is still idle in the cache and was never handed out; null when none. */
    Pod popIdle() {
        String podName;
        while ((podName = ready.poll()) != null) {
            Pod pod = host.cachedPod(podName);
            if (pod != null && PodContract.phase(pod) == PodPhase.IDLE && host.handOut(podName)) {
                return pod;
            }
        }
        return null;
    }

    void bind(KubeSandbox sandbox) {
        byPod.put(sandbox.pod(), sandbox);
    }

    void forget(KubeSandbox sandbox) {
        byPod.remove(sandbox.pod(), sandbox);
    }

    /** Pods bound to a sandbox here, labelled or not yet (the reconciler counts them as running). */
    Set<String> boundPods() {
        return Set.copyOf(byPod.keySet());
    }

    void onPod(Pod pod) {
        String podName = PodContract.name(pod);
        if (PodContract.phase(pod) == PodPhase.IDLE && !host.isHandedOut(podName)) {
            if (ready.offer(podName)) {
                signal.signal(); // a blocked claim may take it
            }
        } else {
            ready.remove(podName);
        }
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            podGone(podName); // a graceful deletion: the object stays for its grace period, the sandbox does not
        }
    }

    void onPodDeleted(Pod pod) {
        String podName = PodContract.name(pod);
        ready.remove(podName);
        podGone(podName);
    }

    private void podGone(String podName) {
        KubeSandbox sandbox = byPod.get(podName);
        if (sandbox != null) {
            sandbox.podGone(podName);
        }
    }

    /**
     * Takes a pod the reconciler is about to delete out of the claims' reach, whether or not it
     * reached the ready queue yet, and keeps informer events from offering it again; false when a
     * claim already took it (it must not be deleted).
     */
    boolean withdrawForDeletion(String podName) {
        ready.remove(podName);
        return host.handOut(podName);
    }

    /** Adopts the claimed pods of this pool a previous worker left (once per pod). */
    void recover() {
        for (Pod pod : host.cachedPods()) {
            SandboxClaim claim = PodContract.claimOf(pod);
            String podName = PodContract.name(pod);
            if (claim == null || PodContract.phase(pod) != PodPhase.RUNNING || !host.handOut(podName)) {
                continue;
            }
            KubeSandbox sandbox = new KubeSandbox(claim, this, host.exec(), host.confirmTimeout(), podName);
            sandbox.confirm(podName);
            bind(sandbox);
            context.adopt(sandbox, claim);
        }
    }

    void release(KubeSandbox sandbox) {
        forget(sandbox);
        if (sandbox.confirmed().isDone() && !sandbox.confirmed().isCompletedExceptionally()) {
            deletePod(sandbox.pod());
        }
        // an unconfirmed sandbox's pod is deleted by the claim writer once the write lands; a
        // failed one holds no pod (the last one it tried belongs to someone else, or is gone)
    }

    void deletePod(String podName) {
        host.deletePod(podName);
        host.requestReconcile();
    }

    @Override
    public int idle() {
        return ready.size();
    }

    @Override
    public int headroom() {
        return host.headroom();
    }

    /** Scales the SandboxPool to 0 (claimed pods stay until released) and fails blocked claims. */
    @Override
    public void retire() {
        retired = true;
        signal.signal();
        host.writePoolResource(template, 0);
    }

    /** Forgets the pool here and fails blocked claims; pods and the SandboxPool stay for the next worker. */
    @Override
    public void close() {
        retired = true;
        signal.signal();
        host.forgetPool();
    }
}
