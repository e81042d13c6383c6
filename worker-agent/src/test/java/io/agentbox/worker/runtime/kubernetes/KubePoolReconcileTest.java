package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPoolStatus;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pool loop against fabric8's mock API server in CRUD mode (no kubelet: {@link KubeMock}
 * marks pods ready): a pool is filled to its size, refilled after a claim, and a released pod is
 * deleted, not reused.
 */
class KubePoolReconcileTest {
    private final KubeMock mock = new KubeMock();

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void poolIsFilledToItsSizeAndReportsItInStatus() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "python", 3);

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(mock.podsInPhase("python", PodPhase.IDLE)).hasSize(3);
            assertThat(pool.idle()).isEqualTo(3);
            SandboxPoolStatus status = mock.poolResource("python").getStatus();
            assertThat(status).isNotNull();
            assertThat(status.getIdleReplicas()).isEqualTo(3);
            assertThat(status.getConditions()).anySatisfy(c -> {
                assertThat(c.getType()).isEqualTo("Available");
                assertThat(c.getStatus()).isEqualTo("True");
            });
        });
        assertThat(mock.pods("python")).hasSize(3);
    }

    @Test
    void claimRefillsThePoolAndReleaseDeletesThePod() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "python", 2);
        await().atMost(Duration.ofSeconds(20)).until(() -> rt.isLeader() && pool.idle() == 2);

        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("python"));
        String pod = sandbox.confirmed().get();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(mock.podsInPhase("python", PodPhase.RUNNING)).extracting(PodContract::name).containsExactly(pod);
            assertThat(mock.podsInPhase("python", PodPhase.IDLE)).hasSize(2);
        });
        var labels = mock.client.pods().inNamespace(KubeMock.NS).withName(pod).get().getMetadata().getLabels();
        assertThat(labels).containsEntry(PodContract.SANDBOX_ID, sandbox.id()).containsEntry(PodContract.PHASE, "running");

        sandbox.kill();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(mock.client.pods().inNamespace(KubeMock.NS).withName(pod).get()).isNull();
            assertThat(mock.podsInPhase("python", PodPhase.IDLE)).hasSize(2).extracting(PodContract::name).doesNotContain(pod);
        });
        assertThat(sandbox.isAlive()).isFalse();
    }

    @Test
    void retiredPoolDeletesIdlePodsButKeepsClaimedOnes() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "node", 2);
        await().atMost(Duration.ofSeconds(20)).until(() -> rt.isLeader() && pool.idle() == 2);
        RuntimeSandbox claimed = pool.claim(KubeMock.claim("node"));
        String pod = ((KubeSandbox) claimed).confirmed().get();

        pool.retire();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(mock.pods("node")).extracting(PodContract::name).containsExactly(pod));
        assertThat(claimed.isAlive()).isTrue();
    }
}
