package io.agentbox.worker.runtime.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records claims on pods off the claim path: a label/annotation update carrying the
 * resourceVersion the pod had when it was seen idle (optimistic locking).
 *
 * <p>Outcomes: success confirms the sandbox's pod. 409 Conflict: the pod is re-read; if it is
 * still idle (someone changed something else) the write is retried on the new version, otherwise
 * (another claimer won, or it is being deleted) the sandbox moves to another idle pod. 404: the
 * pod vanished; the sandbox moves. Other errors are retried {@link #MAX_ATTEMPTS} times in all,
 * then the sandbox fails and the pod is deleted (it was handed out, so it cannot go back to the
 * ready queue). A sandbox moves at most {@link #MAX_MOVES} times, and fails when no idle pod is
 * left: it never shares a pod.
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
    private volatile java.util.concurrent.CountDownLatch hold;

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

    void hold() {
        hold = new java.util.concurrent.CountDownLatch(1);
    }

    void resume() {
        java.util.concurrent.CountDownLatch h = hold;
        hold = null;
        if (h != null) {
            h.countDown();
        }
    }

    private void awaitResume() {
        java.util.concurrent.CountDownLatch h = hold;
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
            try {
                client.pods().inNamespace(namespace).resource(PodContract.claimed(target, sandbox.claim(), identity)).update();
                sandbox.confirm(name);
                if (sandbox.killed()) {
                    pool.deletePod(name); // released before the claim was recorded
                }
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    move(pool, sandbox, name, "was deleted");
                    return;
                }
                if (e.getCode() == 409) {
                    Pod fresh = client.pods().inNamespace(namespace).withName(name).get();
                    if (fresh == null) {
                        move(pool, sandbox, name, "was deleted");
                        return;
                    }
                    if (PodContract.phase(fresh) != PodPhase.IDLE) {
                        move(pool, sandbox, name, "was taken by another writer");
                        return;
                    }
                    target = fresh;
                } else {
                    log.warn("claim of pod {} for sandbox {} failed (attempt {}): {}", name, sandbox.id(), attempt,
                            e.getMessage());
                    pause();
                }
                if (attempt >= MAX_ATTEMPTS) {
                    sandbox.fail("cannot record the claim of pod " + name + ": " + e.getMessage());
                    pool.forget(sandbox);
                    pool.deletePod(name); // handed out but unclaimed: replace it rather than leak it
                    return;
                }
            }
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
