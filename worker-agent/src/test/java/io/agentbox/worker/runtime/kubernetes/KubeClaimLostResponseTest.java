package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A claim write that the API server applied but whose answer the worker never got.
 *
 * <p>How the loss is simulated: {@link LosingDispatcher} lets the CRUD dispatcher apply the first
 * claim PUT (the pod is stored with this sandbox's id and a new resourceVersion), then throws the
 * answer away and sends 504 Gateway Timeout instead — what a load balancer in front of the API
 * server, or the API server's own request timeout, does to a write that still committed.
 * fabric8's client re-sends a request that got a 5xx, with the same body and so the old
 * resourceVersion, and that retry gets 409 Conflict: the sequence of the bug report.
 */
class KubeClaimLostResponseTest {
    private final LosingDispatcher dispatcher = new LosingDispatcher();
    private final KubeMock mock = new KubeMock(dispatcher);

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void aClaimWhoseAnswerWasLostIsConfirmedOnItsPodNotMoved() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "py", 2);
        await().atMost(Duration.ofSeconds(20)).until(() -> rt.isLeader() && pool.idle() == 2);

        dispatcher.loseNextClaim();
        KubeSandbox sandbox = (KubeSandbox) pool.claim(KubeMock.claim("py"));
        String first = sandbox.pod();

        assertThat(sandbox.confirmed().get(20, TimeUnit.SECONDS)).isEqualTo(first);
        assertThat(dispatcher.lost()).isEqualTo(1);
        assertThat(sandbox.isAlive()).isTrue();
        mock.settle("py", 2);
        List<Pod> carrying = mock.pods("py").stream()
                .filter(p -> sandbox.id().equals(PodContract.label(p, PodContract.SANDBOX_ID))).toList();
        assertThat(carrying).extracting(PodContract::name).containsExactly(first);
        assertThat(mock.podsInPhase("py", PodPhase.RUNNING)).extracting(PodContract::name).containsExactly(first);

        // and the pod does not outlive its sandbox
        sandbox.kill();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(mock.client.pods().inNamespace(KubeMock.NS).withName(first).get()).isNull();
            assertThat(mock.podsInPhase("py", PodPhase.RUNNING)).isEmpty();
        });
    }

    /** Applies a claim write, then answers 504 instead of the stored pod (once per {@link #loseNextClaim}). */
    static final class LosingDispatcher extends KubernetesCrudDispatcher {
        private final AtomicBoolean armed = new AtomicBoolean();
        private final AtomicInteger lost = new AtomicInteger();

        LosingDispatcher() {
            super(KubeMock.crds());
        }

        void loseNextClaim() {
            armed.set(true);
        }

        int lost() {
            return lost.get();
        }

        @Override
        public MockResponse handleUpdate(RecordedRequest request) {
            String body = request.getUtf8Body(); // reading drains the buffer: hand the dispatcher a fresh copy
            boolean claimWrite = request.getPath().contains("/pods/") && !request.getPath().endsWith("/status")
                    && body.contains("\"" + PodContract.SANDBOX_ID + "\"");
            MockResponse applied = super.handleUpdate(new RecordedRequest(request.getHttpVersion(), request.method(),
                    request.getPath(), request.getHeaders(), new Buffer().writeUtf8(body)));
            if (claimWrite && applied.code() == 200 && armed.compareAndSet(true, false)) {
                lost.incrementAndGet();
                return new MockResponse().setResponseCode(504).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                        + "\"status\":\"Failure\",\"reason\":\"Timeout\",\"code\":504,"
                        + "\"message\":\"the answer of this write was lost (test)\"}");
            }
            return applied;
        }
    }
}
