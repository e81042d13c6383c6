package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A claim on an empty kubernetes pool blocks on the pool's condition, counts as demand (the
 * reconciler starts a pod for it), and is woken by the informer event that makes the new pod
 * idle, not by a timer (CRUD mock server; {@link KubeMock} stands in for the kubelet). The test
 * watches the runtime's own pod cache and notes when the new pod appears idle there; the claim's
 * return is measured from that moment. A claim that polled every 20 ms (as before) would return
 * 10 ms later on average.
 */
class KubeClaimWaitTest {
    private static final int ROUNDS = 9;
    private final KubeMock mock = new KubeMock();
    private final ExecutorService claims = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-claim"));
    private final AtomicReference<Thread> claimThread = new AtomicReference<>();

    @AfterEach
    void tearDown() {
        claims.shutdownNow();
        mock.close();
    }

    private static ClaimRequest request() {
        long now = System.currentTimeMillis();
        return new ClaimRequest("team-a", now, now + 60_000);
    }

    /** Starts a claim on another thread and returns once that thread is blocked in the pool's wait. */
    private Future<Object[]> claimWhenBlocked(KubePool pool, Duration wait) {
        claimThread.set(null);
        Future<Object[]> f = claims.submit(() -> {
            claimThread.set(Thread.currentThread());
            RuntimeSandbox s = pool.claim(request(), wait);
            return new Object[] {System.nanoTime(), s};
        });
        // a claim may also be met at once (a pod a previous round's demand started): then it is done
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1)).until(() -> {
            Thread t = claimThread.get();
            return f.isDone() || t != null && t.getState() == Thread.State.TIMED_WAITING;
        });
        return f;
    }

    /**
     * Spins until the runtime's cache holds an idle pod of the pool other than {@code earlier}
     * (a pod stays idle in the cache until the claim's label write lands, handed out or not);
     * returns when it saw it, or -1 when the claim completed first (on a loaded machine the
     * spinner can miss the short idle window; that round then says nothing about the wake-up).
     */
    private static long idlePodSeen(KubernetesRuntime rt, String pool, List<String> earlier, Future<?> claim) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            boolean claimDone = claim.isDone();
            for (Pod p : rt.caches().podsOf(pool)) {
                if (PodContract.phase(p) == PodPhase.IDLE && !earlier.contains(PodContract.name(p))) {
                    return System.nanoTime();
                }
            }
            if (claimDone) {
                return -1;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000); // leaves the cores to the informer and the claim
        }
        throw new AssertionError("no new idle pod of " + pool + " within 20 s");
    }

    @Test
    void aClaimOnAnEmptyPoolIsWokenByTheInformerWhenItsPodBecomesIdle() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "wake", 0);
        rt.firstLeadership().get();

        List<Long> latenciesUs = new ArrayList<>();
        List<KubeSandbox> got = new ArrayList<>();
        List<String> pods = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            Future<Object[]> claimed = claimWhenBlocked(pool, Duration.ofSeconds(20));
            boolean blocked = !claimed.isDone();
            long seenAt = blocked ? idlePodSeen(rt, "wake", pods, claimed) : -1;
            Object[] r = claimed.get(20, TimeUnit.SECONDS);
            if (seenAt >= 0) { // only a claim that waited, and whose wake-up was seen, says how soon it was woken
                latenciesUs.add(Math.max(0, ((Long) r[0] - seenAt) / 1000));
            }
            KubeSandbox s = (KubeSandbox) r[1];
            pods.add(s.confirmed().get(10, TimeUnit.SECONDS));
            got.add(s);
        }
        assertThat(latenciesUs.size()).as("rounds whose claim had to wait").isGreaterThanOrEqualTo(3);
        Collections.sort(latenciesUs);
        long medianUs = latenciesUs.get(latenciesUs.size() / 2);
        System.out.println("kubernetes pool: claim woken " + medianUs + " µs (median of " + latenciesUs.size() + " of " + ROUNDS
                + " rounds that waited, max " + latenciesUs.get(latenciesUs.size() - 1) + " µs) after its pod became idle in the informer cache");
        assertThat(medianUs).as("median wake-up after the pod became idle, µs").isLessThan(5_000);
        assertThat(got.stream().map(KubeSandbox::pod).distinct()).hasSize(ROUNDS);
        // demand met, nothing kept warm
        mock.settle("wake", 0);
    }

    @Test
    void aBlockedClaimGivesUpWithResourceExhaustedAndARetiredPoolFailsItAtOnce() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "capped", 0);
        rt.firstLeadership().get();
        // an admin caps the pool at 0: no pod is ever started for a waiting claim
        await().atMost(Duration.ofSeconds(10)).ignoreException(KubernetesClientException.class).until(() -> {
            SandboxPool p = mock.poolResource("capped");
            p.getSpec().setMaxReplicas(0);
            mock.client.resources(SandboxPool.class).inNamespace(KubeMock.NS).resource(p).update();
            return true;
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> Integer.valueOf(0).equals(rt.caches().pool("capped").getSpec()
                .getMaxReplicas()));

        long t0 = System.nanoTime();
        assertThatThrownBy(() -> pool.claim(request(), Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("no idle sandbox of template 'capped' on cluster k8s-test within 1 s");
                });
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(5));
        assertThat(pool.waitingClaims()).as("a claim that gave up is no longer demand").isZero();

        Future<Object[]> waiting = claimWhenBlocked(pool, Duration.ofSeconds(20));
        assertThat(pool.waitingClaims()).isEqualTo(1);
        long retiredAt = System.nanoTime();
        pool.retire();
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).cause()
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(Duration.ofNanos(System.nanoTime() - retiredAt)).isLessThan(Duration.ofSeconds(2));
        assertThat(pool.waitingClaims()).isZero();
        mock.settle("capped", 0);
    }
}
