package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.SandboxHost;
import io.agentbox.worker.pool.ClaimedSandbox;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pool of size 0 has no warm pod: claims that find nothing idle are demand, and the reconciler
 * starts pods for them (CRUD mock server; {@link KubeMock} stands in for the kubelet). Claims go
 * through the worker's own claim path ({@code SandboxPools.claim}, which waits up to 10 s).
 */
class KubeColdStartTest {
    private static final int CLAIMS = 16;
    private final KubeMock mock = new KubeMock();
    private SandboxHost host;

    @AfterEach
    void tearDown() {
        if (host != null) {
            host.close();
        }
        mock.close();
    }

    @Test
    void claimsOnAnEmptyPoolColdStartTheirPods() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        host = SandboxHost.withRuntimes("k8s-one", List.of(rt), 64);
        host.applyTemplates(List.of(Template.newBuilder().setName("cold").setPoolSize(0).setRuntime("kubernetes").build()));
        rt.firstLeadership().get();

        ExecutorService threads = Executors.newFixedThreadPool(CLAIMS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimedSandbox>> futures = new ArrayList<>();
        for (int i = 0; i < CLAIMS; i++) {
            futures.add(threads.submit(() -> {
                go.await();
                return host.pools().claim(CreateSandboxRequest.newBuilder().setTemplate("cold").setOwner("team-a").build());
            }));
        }
        long start = System.nanoTime();
        go.countDown();
        List<KubeSandbox> sandboxes = new ArrayList<>();
        for (Future<ClaimedSandbox> f : futures) {
            sandboxes.add((KubeSandbox) f.get().runtime()); // RESOURCE_EXHAUSTED after 10 s before the fix
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        threads.shutdown();
        System.out.println("cold start: " + CLAIMS + " claims on an empty pool got pods in " + tookMs + " ms");

        for (KubeSandbox s : sandboxes) {
            s.confirmed().get();
        }
        Map<String, String> sandboxByPod = mock.podsInPhase("cold", PodPhase.RUNNING).stream()
                .collect(Collectors.toMap(PodContract::name, p -> PodContract.label(p, PodContract.SANDBOX_ID)));
        assertThat(sandboxByPod).hasSize(CLAIMS);
        for (KubeSandbox s : sandboxes) {
            assertThat(sandboxByPod).containsEntry(s.pod(), s.id());
        }
        // demand met, nothing kept warm: the pool's size is still 0
        mock.settle("cold", 0);
        assertThat(mock.pods("cold")).hasSize(CLAIMS);
    }

    @Test
    void coldStartsStopAtMaxReplicas() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, "capped", 0);
        rt.firstLeadership().get();
        // an admin caps the pool (the worker only ever writes spec.replicas)
        await().atMost(Duration.ofSeconds(10)).ignoreException(KubernetesClientException.class).until(() -> {
            SandboxPool p = mock.poolResource("capped");
            p.getSpec().setMaxReplicas(4);
            mock.client.resources(SandboxPool.class).inNamespace(KubeMock.NS).resource(p).update();
            return true;
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> Integer.valueOf(4).equals(rt.caches().pool("capped").getSpec()
                .getMaxReplicas()));

        int[] mostPods = {0};
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleAtFixedRate(() -> mostPods[0] = Math.max(mostPods[0], mock.pods("capped").size()), 0, 50,
                TimeUnit.MILLISECONDS);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<Future<RuntimeSandbox>> futures = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            futures.add(threads.submit(() -> claimWithin(pool, Duration.ofSeconds(4))));
        }
        List<RuntimeSandbox> got = new ArrayList<>();
        for (Future<RuntimeSandbox> f : futures) {
            RuntimeSandbox s = f.get();
            if (s != null) {
                got.add(s);
            }
        }
        threads.shutdown();
        sampler.shutdown();
        sampler.awaitTermination(5, TimeUnit.SECONDS);

        assertThat(got).hasSize(4);
        assertThat(mostPods[0]).isEqualTo(4);
        assertThat(mock.podsInPhase("capped", PodPhase.RUNNING)).hasSize(4);
    }

    /** Claims that ask without waiting ({@link KubePool#claim(SandboxClaim)}): again every 20 ms with the same claim until a pod is had or time is up. */
    private static RuntimeSandbox claimWithin(KubePool pool, Duration wait) throws InterruptedException {
        SandboxClaim claim = KubeMock.claim(pool.name());
        long deadline = System.nanoTime() + wait.toNanos();
        while (System.nanoTime() < deadline) {
            RuntimeSandbox s = pool.claim(claim);
            if (s != null) {
                ((KubeSandbox) s).confirmed().join();
                return s;
            }
            Thread.sleep(20);
        }
        return null;
    }
}
