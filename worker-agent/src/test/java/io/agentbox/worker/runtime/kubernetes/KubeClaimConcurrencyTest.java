package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** 200 claims at once on the CRUD mock server: every sandbox gets its own pod, and the API agrees. */
class KubeClaimConcurrencyTest {
    private static final int CLAIMS = 200;
    private final KubeMock mock = new KubeMock();

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void twoHundredConcurrentClaimsNeverShareAPod() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "bulk", CLAIMS);
        await().atMost(Duration.ofSeconds(40)).until(() -> rt.isLeader() && pool.idle() == CLAIMS);

        ExecutorService threads = Executors.newFixedThreadPool(32);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<RuntimeSandbox>> futures = new ArrayList<>();
        for (int i = 0; i < CLAIMS; i++) {
            futures.add(threads.submit(() -> {
                go.await();
                return pool.claim(KubeMock.claim("bulk"));
            }));
        }
        go.countDown();
        List<KubeSandbox> sandboxes = new ArrayList<>();
        for (Future<RuntimeSandbox> f : futures) {
            sandboxes.add((KubeSandbox) f.get());
        }
        threads.shutdown();

        assertThat(sandboxes).doesNotContainNull();
        Set<String> handedOut = sandboxes.stream().map(KubeSandbox::pod).collect(Collectors.toSet());
        assertThat(handedOut).hasSize(CLAIMS);

        List<String> confirmedPods = new ArrayList<>();
        for (KubeSandbox s : sandboxes) {
            confirmedPods.add(s.confirmed().get());
        }
        assertThat(new HashSet<>(confirmedPods)).hasSize(CLAIMS);

        // the API server's view: each claimed pod carries exactly the sandbox that holds it
        Map<String, String> sandboxByPod = mock.podsInPhase("bulk", PodPhase.RUNNING).stream()
                .collect(Collectors.toMap(PodContract::name, p -> PodContract.label(p, PodContract.SANDBOX_ID)));
        assertThat(sandboxByPod).hasSize(CLAIMS);
        for (KubeSandbox s : sandboxes) {
            assertThat(sandboxByPod).containsEntry(s.pod(), s.id());
        }
        List<Pod> idleAfter = mock.podsInPhase("bulk", PodPhase.IDLE);
        assertThat(idleAfter).extracting(PodContract::name).doesNotContainAnyElementsOf(handedOut);
    }
}
