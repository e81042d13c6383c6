package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records claims on pods off the claim path: a label/annotation update carrying the
 * resourceVersion the pod had when it was seen idle (optimistic locking). Deletes pods on the
 * same bounded executor ({@link #delete}).
 *
 * <p>Outcomes: success confirms the sandbox's pod. 404: the pod vanished; the sandbox moves. Any
 * other failure (409 Conflict, 5xx, timeout) re-reads the pod first, because the write may have
 * landed with its answer lost: a pod that already carries this sandbox's id confirms it; a pod
 * still idle (someone changed something else) gets the write again on its new version; a pod
 * claimed by another sandbox, or being deleted, makes the sandbox move to another idle pod.
 * Writes are tried {@link #MAX_ATTEMPTS} times in all, then the sandbox fails and the pod is
 * deleted (it was handed out, so it cannot go back to the ready queue). A sandbox moves at most
 * {@link #MAX_MOVES} times, and fails when no idle pod is left: it never shares a pod.
 */
final class ClaimWriter {
    static final int MAX_ATTEMPTS = 4;
    static final int MAX_MOVES = 5;
    private static final long RETRY_PAUSE_MS = 100;
    private static final Logger log = LoggerFactory.getLogger(ClaimWriter.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String identity;
    private final ExecutorService executor;
    /** Test seam: while set, queued writes wait here (lets tests change a pod between claim and write). */
    private volatile CountDownLatch hold;

    ClaimWriter(KubernetesClient client, String namespace, String identity, ExecutorService executor) {
        this.client = client;
        this.namespace = namespace;
        this.identity = identity;
        this.executor = executor;
    }

    /** Queues the write; when the queue is full the sandbox fails at once. */
    void submit(KubePool pool, KubeSandbox sandbox, Pod seen) {
        try {
            executor.execute(() -> write(pool, sandbox, seen));
        } catch (RejectedExecutionException e) {
            sandbox.fail("too many claims waiting to be recorded");
            pool.forget(sandbox);
        }
    }

    /** Queues the deletion of a pod; a failed or refused one is logged and left to the pool's next reconcile. */
    void delete(String podName) {
        try {
            executor.execute(() -> {
                try {
                    client.pods().inNamespace(namespace).withName(podName).delete();
                } catch (KubernetesClientException e) {
                    log.warn("cannot delete pod {}: {}", podName, e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            log.warn("cannot queue the deletion of pod {}; the pool's next reconcile or a restart cleans up", podName);
        }
    }

    void hold() {
        hold = new CountDownLatch(1);
    }

    void resume() {
        CountDownLatch h = hold;
        hold = null;
        if (h != null) {
            h.countDown();
        }
    }

    private void awaitResume() {
        CountDownLatch h = hold;
        if (h != null) {
            try {
                h.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void write(KubePool pool, KubeSandbox sandbox, Pod seen) {
        awaitResume();
        Pod target = seen;
        String name = PodContract.name(seen);
        for (int attempt = 1; ; attempt++) {
            KubernetesClientException failure;
            try {
                client.pods().inNamespace(namespace).resource(PodContract.claimed(target, sandbox.claim(), identity)).update();
                landed(pool, sandbox, name);
                return;
            } catch (KubernetesClientException e) {
                failure = e;
            }
            if (failure.getCode() == 404) {
                move(pool, sandbox, name, "was deleted");
                return;
            }
            if (failure.getCode() != 409) {
                log.warn("claim of pod {} for sandbox {} failed (attempt {}): {}", name, sandbox.id(), attempt,
                        failure.getMessage());
                pause();
            }
            // Whatever the answer, the write may have landed: a write applied whose answer was lost
            // comes back as a 5xx or timeout, and its retry (ours or the client's) as 409. Only the
            // stored pod tells, so read it before deciding to retry or to move.
            try {
                Pod fresh = client.pods().inNamespace(namespace).withName(name).get();
                if (fresh == null) {
                    move(pool, sandbox, name, "was deleted");
                    return;
                }
                PodPhase phase = PodContract.phase(fresh);
                if (phase == PodPhase.RUNNING && sandbox.id().equals(PodContract.label(fresh, PodContract.SANDBOX_ID))) {
                    log.info("claim of pod {} for sandbox {} had landed although its answer was lost ({})", name,
                            sandbox.id(), failure.getCode());
                    landed(pool, sandbox, name);
                    return;
                }
                if (phase != PodPhase.IDLE) {
                    move(pool, sandbox, name, phase == PodPhase.STOPPING ? "is being deleted" : "was taken by another writer");
                    return;
                }
                target = fresh; // still idle: someone changed something else; retry on the new version
            } catch (KubernetesClientException readFailure) {
                log.warn("cannot re-read pod {} for sandbox {}: {}", name, sandbox.id(), readFailure.getMessage());
            }
            if (attempt >= MAX_ATTEMPTS) {
                sandbox.fail("cannot record the claim of pod " + name + ": " + failure.getMessage());
                pool.forget(sandbox);
                pool.deletePod(name); // handed out, maybe claimed: replace it rather than leak it
                return;
            }
        }
    }

    /** The API holds the claim: the sandbox may use the pod (or gives it up at once if released meanwhile). */
    private static void landed(KubePool pool, KubeSandbox sandbox, String name) {
        sandbox.confirm(name);
        if (sandbox.killed()) {
            pool.deletePod(name); // released before the claim was recorded
        }
    }

    private void move(KubePool pool, KubeSandbox sandbox, String lost, String why) {
        pool.forget(sandbox);
        if (sandbox.killed()) {
            return;
        }
        if (sandbox.moves() >= MAX_MOVES) {
            sandbox.fail("pod " + lost + " " + why + " and the sandbox already moved " + MAX_MOVES + " times");
            return;
        }
        Pod next = pool.popIdle();
        if (next == null) {
            sandbox.fail("pod " + lost + " " + why + " and no other idle pod is ready");
            return;
        }
        log.info("sandbox {}: pod {} {}; moving to pod {}", sandbox.id(), lost, why, PodContract.name(next));
        sandbox.moveTo(PodContract.name(next));
        pool.bind(sandbox);
        write(pool, sandbox, next);
    }

    private static void pause() {
        try {
            Thread.sleep(RETRY_PAUSE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
