package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two worker replicas on one namespace (CRUD mock server): one Lease, one claiming leader; a
 * follower refuses claims; a restarted or newly elected worker rebuilds its sandboxes from pod
 * labels and never hands out a pod that is already claimed.
 */
class KubeLeaderRecoveryTest {
    private final KubeMock mock = new KubeMock();

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void exactlyOneReplicaLeadsAndOnlyItClaims() {
        KubernetesRuntime a = mock.runtime("worker-a");
        KubernetesRuntime b = mock.runtime("worker-b");
        KubePool poolA = mock.open(a, "py", 2);
        KubePool poolB = mock.open(b, "py", 2);

        await().atMost(Duration.ofSeconds(20)).until(() -> a.isLeader() || b.isLeader());
        KubernetesRuntime leader = a.isLeader() ? a : b;
        KubePool leaderPool = leader == a ? poolA : poolB;
        KubePool followerPool = leader == a ? poolB : poolA;
        assertThat(a.isLeader() && b.isLeader()).isFalse();
        await().atMost(Duration.ofSeconds(20)).until(() -> leaderPool.idle() == 2 && followerPool.idle() == 2);

        assertThatThrownBy(() -> followerPool.claim(KubeMock.claim("py")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(leaderPool.claim(KubeMock.claim("py"))).isNotNull();
        String holder = mock.client.leases().inNamespace(KubeMock.NS).withName(KubeRuntimeConfig.DEFAULT_LEASE).get()
                .getSpec().getHolderIdentity();
        assertThat(holder).isEqualTo(leader.config().identity());
    }

    @Test
    void leaderThatLosesTheLeaseStopsClaimingAndSaysSo() {
        KubernetesRuntime a = mock.runtime("worker-a");
        KubePool pool = mock.open(a, "py", 1);
        java.util.concurrent.CountDownLatch lost = new java.util.concurrent.CountDownLatch(1);
        a.onLeadershipLost(lost::countDown);
        await().atMost(Duration.ofSeconds(20)).until(() -> a.firstLeadership().isDone() && pool.idle() == 1);

        // another replica (or a partition) takes the lease: the renewals of worker-a start failing
        await().atMost(Duration.ofSeconds(20)).ignoreException(io.fabric8.kubernetes.client.KubernetesClientException.class)
                .until(() -> {
                    var lease = mock.client.leases().inNamespace(KubeMock.NS).withName(KubeRuntimeConfig.DEFAULT_LEASE).get();
                    lease.getSpec().setHolderIdentity("intruder");
                    lease.getSpec().setLeaseDurationSeconds(600);
                    lease.getSpec().setRenewTime(java.time.ZonedDateTime.now());
                    mock.client.leases().inNamespace(KubeMock.NS).resource(lease).update(); // 409 while worker-a renews: retried
                    return true;
                });

        await().atMost(Duration.ofSeconds(20)).until(() -> lost.getCount() == 0);
        assertThat(a.isLeader()).isFalse();
        assertThatThrownBy(() -> pool.claim(KubeMock.claim("py")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void followerTakesOverWhenTheLeaderStopsAndAdoptsItsSandboxes() throws Exception {
        KubernetesRuntime a = mock.runtime("worker-a");
        KubePool poolA = mock.open(a, "py", 3);
        await().atMost(Duration.ofSeconds(20)).until(() -> a.isLeader() && poolA.idle() == 3);
        KubernetesRuntime b = mock.runtime("worker-b");
        KubePool poolB = mock.open(b, "py", 3);

        Set<String> claimedByA = new HashSet<>();
        Map<String, String> podBySandbox = new java.util.HashMap<>();
        for (int i = 0; i < 2; i++) {
            KubeSandbox s = (KubeSandbox) poolA.claim(KubeMock.claim("py"));
            podBySandbox.put(s.id(), s.confirmed().get());
            claimedByA.add(s.pod());
        }
        assertThat(b.isLeader()).isFalse();
        mock.settle("py", 3);

        a.close(); // a rolling update: pods and their labels stay, the lease is released

        await().atMost(Duration.ofSeconds(20)).until(() -> b.isLeader() && b.firstLeadership().isDone());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(mock.adopted.get(b)).containsOnlyKeys(podBySandbox.keySet()));
        for (var e : mock.adopted.get(b).entrySet()) {
            KubeSandbox adopted = (KubeSandbox) e.getValue();
            assertThat(adopted.pod()).isEqualTo(podBySandbox.get(e.getKey()));
            assertThat(adopted.isAlive()).isTrue();
            assertThat(adopted.claim().owner()).isEqualTo("team-a");
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> poolB.idle() == 3);
        List<String> newPods = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RuntimeSandbox s = poolB.claim(KubeMock.claim("py"));
            newPods.add(((KubeSandbox) s).confirmed().get());
        }
        assertThat(newPods).doesNotContainAnyElementsOf(claimedByA).doesNotHaveDuplicates();
    }

    @Test
    void restartedWorkerRecoversClaimsFromPodLabels() throws Exception {
        KubernetesRuntime first = mock.runtime("worker-a");
        KubePool pool = mock.open(first, "py", 2);
        await().atMost(Duration.ofSeconds(20)).until(() -> first.isLeader() && pool.idle() == 2);
        KubeSandbox claimed = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String pod = claimed.confirmed().get();
        mock.settle("py", 2);
        first.close();

        KubernetesRuntime restarted = mock.runtime("worker-a");
        KubePool again = mock.open(restarted, "py", 2);

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(mock.adopted.get(restarted)).containsOnlyKeys(claimed.id()));
        KubeSandbox adopted = (KubeSandbox) mock.adopted.get(restarted).get(claimed.id());
        assertThat(adopted.pod()).isEqualTo(pod);
        assertThat(adopted.claim().endAtMs()).isEqualTo(claimed.claim().endAtMs());
        await().atMost(Duration.ofSeconds(20)).until(() -> again.idle() == 2);
        KubeSandbox next = (KubeSandbox) again.claim(KubeMock.claim("py"));
        assertThat(next.confirmed().get()).isNotEqualTo(pod);
    }
}
