package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What happens to a claim whose label write races with someone else, on the CRUD mock server.
 * Claim writes are held back after the claim returns (a test seam) so the other writer
 * deterministically gets there first; the claim's write then carries a stale resourceVersion.
 */
class KubeClaimConflictTest {
    private static final String HOLD = "test.agentbox.io/hold";
    private final KubeMock mock = new KubeMock();
    private final KubeMock.LocalShellExec exec = new KubeMock.LocalShellExec();
    private KubernetesRuntime rt;
    private KubePool pool;

    @BeforeEach
    void setUp() {
        rt = mock.runtime("worker-a", exec);
        pool = mock.open(rt, "py", 3);
        await().atMost(Duration.ofSeconds(20)).until(() -> rt.isLeader() && pool.idle() == 3);
    }

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void unrelatedChangeToTheClaimedPodIsRetriedOnTheNewVersion() throws Exception {
        rt.writer().hold();
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String pod = sandbox.pod();
        edit(pod, p -> new PodBuilder(p).editMetadata().addToLabels("team", "blue").endMetadata().build());
        rt.writer().resume();

        assertThat(sandbox.confirmed().get()).isEqualTo(pod);
        Pod stored = get(pod);
        assertThat(stored.getMetadata().getLabels()).containsEntry("team", "blue")
                .containsEntry(PodContract.SANDBOX_ID, sandbox.id());
    }

    @Test
    void podClaimedByAnotherWriterMovesTheSandboxBeforeItsFirstCommand() throws Exception {
        rt.writer().hold();
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String stolen = sandbox.pod();
        edit(stolen, p -> new PodBuilder(p).editMetadata().addToLabels(PodContract.PHASE, PodContract.PHASE_RUNNING)
                .addToLabels(PodContract.SANDBOX_ID, "someone-else").endMetadata().build());
        rt.writer().resume();

        LaunchedProcess p = sandbox.launch(new LaunchSpec("true", List.of(), Map.of(), "/", false));
        assertThat(p.waitFor()).isZero();

        String moved = sandbox.confirmed().get();
        assertThat(moved).isNotEqualTo(stolen);
        assertThat(exec.podsUsed).containsOnly(moved);
        assertThat(get(stolen).getMetadata().getLabels()).containsEntry(PodContract.SANDBOX_ID, "someone-else");
        assertThat(get(moved).getMetadata().getLabels()).containsEntry(PodContract.SANDBOX_ID, sandbox.id());
    }

    @Test
    void podDeletedBeforeTheClaimIsRecordedMovesTheSandbox() throws Exception {
        rt.writer().hold();
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String deleted = sandbox.pod();
        mock.client.pods().inNamespace(KubeMock.NS).withName(deleted).delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> get(deleted) == null);
        rt.writer().resume();

        String moved = sandbox.confirmed().get();
        assertThat(moved).isNotEqualTo(deleted);
        assertThat(sandbox.isAlive()).isTrue();
        assertThat(get(moved).getMetadata().getLabels()).containsEntry(PodContract.SANDBOX_ID, sandbox.id());
    }

    @Test
    void podDeletedAfterTheClaimEndsTheSandboxAndThePoolRefills() throws Exception {
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String pod = sandbox.confirmed().get();

        mock.client.pods().inNamespace(KubeMock.NS).withName(pod).delete();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(sandbox.isAlive()).isFalse();
            assertThat(mock.podsInPhase("py", PodPhase.IDLE)).hasSize(3);
        });
    }

    /**
     * Graceful deletion on the mock: a finalizer keeps the pod object after the delete, carrying a
     * deletionTimestamp, as a real pod does during its termination grace period.
     */
    @Test
    void podBeingDeletedGracefullyCountsAsGoneBeforeTheObjectIs() throws Exception {
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String claimed = sandbox.confirmed().get();
        String idle = mock.podsInPhase("py", PodPhase.IDLE).get(0).getMetadata().getName();
        for (String name : List.of(claimed, idle)) {
            edit(name, p -> new PodBuilder(p).editMetadata().addToFinalizers(HOLD).endMetadata().build());
            mock.client.pods().inNamespace(KubeMock.NS).withName(name).delete();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> get(claimed).getMetadata().getDeletionTimestamp() != null
                && get(idle).getMetadata().getDeletionTimestamp() != null);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(sandbox.isAlive()).isFalse();
            assertThat(mock.podsInPhase("py", PodPhase.IDLE)).hasSize(3).extracting(PodContract::name)
                    .doesNotContain(claimed, idle);
            assertThat(mock.poolResource("py").getStatus().getStoppingReplicas()).isEqualTo(2);
            assertThat(mock.poolResource("py").getStatus().getRunningReplicas()).isZero();
        });
        assertThat(get(claimed)).isNotNull(); // the object is still there: only its deletion timestamp said "gone"
        for (int i = 0; i < 3; i++) {
            assertThat(((KubeSandbox) pool.claim(KubeMock.claim("py"))).pod()).isNotIn(claimed, idle);
        }

        for (String name : List.of(claimed, idle)) {
            edit(name, p -> new PodBuilder(p).editMetadata().withFinalizers(List.of()).endMetadata().build());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> get(claimed) == null && get(idle) == null);
    }

    @Test
    void podThatStartsTerminatingBeforeTheClaimIsRecordedMovesTheSandbox() throws Exception {
        rt.writer().hold();
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String going = sandbox.pod();
        edit(going, p -> new PodBuilder(p).editMetadata().addToFinalizers(HOLD).endMetadata().build());
        mock.client.pods().inNamespace(KubeMock.NS).withName(going).delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> rt.caches().pod(going).getMetadata().getDeletionTimestamp() != null);
        rt.writer().resume();

        String moved = sandbox.confirmed().get();
        assertThat(moved).isNotEqualTo(going);
        assertThat(sandbox.isAlive()).isTrue();
        assertThat(get(moved).getMetadata().getLabels()).containsEntry(PodContract.SANDBOX_ID, sandbox.id());
        edit(going, p -> new PodBuilder(p).editMetadata().withFinalizers(List.of()).endMetadata().build());
        await().atMost(Duration.ofSeconds(10)).until(() -> get(going) == null);
    }

    @Test
    void withNoOtherIdlePodALostClaimFailsTheSandboxInsteadOfSharingAPod() throws Exception {
        rt.writer().hold();
        KubeSandbox first = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        KubeSandbox second = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        KubeSandbox third = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        // new pods must not rescue it: stop the reconciler from refilling by shrinking the pool to 0
        rt.writePoolResource(pool, 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> rt.caches().pool("py").getSpec().getReplicas() == 0);
        edit(third.pod(), p -> new PodBuilder(p).editMetadata().addToLabels(PodContract.PHASE, PodContract.PHASE_RUNNING)
                .addToLabels(PodContract.SANDBOX_ID, "someone-else").endMetadata().build());
        rt.writer().resume();

        assertThat(first.confirmed().get()).isNotEqualTo(second.confirmed().get());
        await().atMost(Duration.ofSeconds(10)).until(() -> third.confirmed().isDone());
        assertThat(third.isAlive()).isFalse();
        assertThat(third.confirmed()).isCompletedExceptionally();

        // releasing the failed sandbox must not delete the pod the other writer holds
        String stolen = third.pod();
        third.kill();
        String firstPod = first.pod();
        first.kill();
        await().atMost(Duration.ofSeconds(10)).until(() -> get(firstPod) == null);
        assertThat(get(stolen)).isNotNull();
        assertThat(get(stolen).getMetadata().getLabels()).containsEntry(PodContract.SANDBOX_ID, "someone-else");
    }

    private Pod get(String name) {
        return mock.client.pods().inNamespace(KubeMock.NS).withName(name).get();
    }

    private void edit(String name, java.util.function.UnaryOperator<Pod> change) {
        mock.client.pods().inNamespace(KubeMock.NS).resource(change.apply(get(name))).update();
    }
}
