package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.TemplateImages;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.SandboxStarter;
import io.agentbox.worker.runtime.kubernetes.exec.PodExec;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * fabric8's Kubernetes mock server in CRUD mode (the only Kubernetes API that can run in this
 * build) plus a stand-in kubelet: the mock has no kubelet, so every new pool pod is marked
 * Running and Ready here, as a node would once its container started.
 */
final class KubeMock implements AutoCloseable {
    static final String NS = "sandboxes";

    final KubernetesMockServer server;
    final KubernetesClient client;
    private final ExecutorService kubeletThreads = Executors.newFixedThreadPool(4);
    private final SharedIndexInformer<Pod> kubelet;
    private final List<KubernetesRuntime> runtimes = new CopyOnWriteArrayList<>();
    /** Sandboxes adopted by each runtime, by sandbox id. */
    final Map<KubernetesRuntime, Map<String, RuntimeSandbox>> adopted = new ConcurrentHashMap<>();

    KubeMock() {
        this(new KubernetesCrudDispatcher(crds()));
    }

    /** A mock on a given CRUD dispatcher (a subclass may fault-inject); it must know {@link #crds()}. */
    KubeMock(KubernetesCrudDispatcher dispatcher) {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init();
        client = server.createClient();
        kubelet = client.pods().inNamespace(NS).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                kubeletThreads.execute(() -> markReady(pod.getMetadata().getName()));
            }

            @Override
            public void onUpdate(Pod old, Pod pod) {}

            @Override
            public void onDelete(Pod pod, boolean unknownFinalState) {}
        });
    }

    /** The custom resources the CRUD dispatcher must serve. */
    static List<CustomResourceDefinitionContext> crds() {
        return List.of(CustomResourceDefinitionContext.fromCustomResourceType(SandboxPool.class),
                CustomResourceDefinitionContext.fromCustomResourceType(SandboxTemplate.class));
    }

    /** Sets phase Running and condition Ready=True, retrying on conflicts; a vanished pod is left alone. */
    void markReady(String name) {
        for (int i = 0; i < 20; i++) {
            Pod pod = client.pods().inNamespace(NS).withName(name).get();
            if (pod == null || PodContract.isReady(pod)) {
                return;
            }
            Pod ready = new PodBuilder(pod).withNewStatus().withPhase("Running")
                    .withConditions(new PodConditionBuilder().withType("Ready").withStatus("True").build()).endStatus().build();
            try {
                client.pods().inNamespace(NS).resource(ready).updateStatus();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 && e.getCode() != 404) {
                    throw e;
                }
            }
        }
    }

    /** Config with short leader timings so elections settle within a second or two. */
    static KubeRuntimeConfig config(String identity) {
        return KubeRuntimeConfig.defaults(NS, identity)
                .withLeaderTimings(Duration.ofMillis(1500), Duration.ofMillis(1000), Duration.ofMillis(200))
                .withResync(Duration.ofSeconds(1));
    }

    KubernetesRuntime runtime(String identity, PodExec exec) {
        KubernetesRuntime rt = KubernetesRuntime.start(client, config(identity), exec);
        runtimes.add(rt);
        adopted.put(rt, new ConcurrentHashMap<>());
        return rt;
    }

    KubernetesRuntime runtime(String identity) {
        return runtime(identity, new LocalShellExec());
    }

    KubePool open(KubernetesRuntime rt, String template, int poolSize) {
        return open(rt, template(template, poolSize).build());
    }

    KubePool open(KubernetesRuntime rt, Template template) {
        return (KubePool) rt.openPool(template, context(rt));
    }

    /** The worker's side of a pool as the tests need it: cluster "k8s-test", adoptions recorded in {@link #adopted}. */
    PoolContext context(KubernetesRuntime rt) {
        return new PoolContext() {
            @Override
            public String clusterId() {
                return "k8s-test";
            }

            @Override
            public TemplateImages images() {
                return TemplateImages.BUILT_IN_ONLY;
            }

            @Override
            public RuntimePool warmPool(Template template, SandboxStarter starter) {
                throw new UnsupportedOperationException("the kubernetes runtime keeps its own pools");
            }

            @Override
            public void adopt(RuntimeSandbox sandbox, SandboxClaim claim) {
                adopted.get(rt).put(claim.sandboxId(), sandbox);
            }
        };
    }

    /** A hub template of the kubernetes runtime with nothing but a name and a pool size set. */
    static Template.Builder template(String name, int poolSize) {
        return Template.newBuilder().setName(name).setPoolSize(poolSize).setRuntime("kubernetes");
    }

    static SandboxClaim claim(String template) {
        long now = System.currentTimeMillis();
        return new SandboxClaim("sbx-" + UUID.randomUUID().toString().substring(0, 12), template, "team-a", now, now + 60_000);
    }

    List<Pod> pods(String pool) {
        return client.pods().inNamespace(NS).withLabel(PodContract.POOL, pool).list().getItems();
    }

    List<Pod> podsInPhase(String pool, PodPhase phase) {
        return pods(pool).stream().filter(p -> PodContract.phase(p) == phase).toList();
    }

    /**
     * Waits until the pool's stored status shows {@code idle} idle pods and no scaling, so no
     * events are in flight. Close runtimes only then: the mock server's watch close can block its
     * event loop for seconds while a watch still has events queued.
     */
    void settle(String pool, int idle) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
            SandboxPool p = poolResource(pool);
            return p != null && p.getStatus() != null && Integer.valueOf(idle).equals(p.getStatus().getIdleReplicas())
                    && p.getStatus().getConditions().stream()
                            .anyMatch(c -> c.getType().equals("Scaling") && c.getStatus().equals("False"))
                    && podsInPhase(pool, PodPhase.IDLE).size() == idle;
        });
    }

    SandboxPool poolResource(String name) {
        return client.resources(SandboxPool.class).inNamespace(NS).withName(name).get();
    }

    /**
     * Stops every writer, waits for the API to go quiet, then closes the watches: the mock server
     * can block its event loop for up to a minute when a watch closes with events still queued
     * (its WatchEventsListener waits for its sender on the loop the sender needs).
     */
    @Override
    public void close() {
        kubeletThreads.shutdownNow();
        for (KubernetesRuntime rt : runtimes) {
            rt.stopWriting();
        }
        awaitQuiet();
        for (KubernetesRuntime rt : runtimes) {
            rt.close();
        }
        kubelet.close();
        client.close();
        server.destroy();
    }

    /** Waits until names and resourceVersions of pods and pools stay the same over a few polls. */
    private void awaitQuiet() {
        String[] last = {""};
        int[] stable = {0};
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> {
            String now = fingerprint();
            stable[0] = now.equals(last[0]) ? stable[0] + 1 : 0;
            last[0] = now;
            return stable[0] >= 3;
        });
    }

    private String fingerprint() {
        StringBuilder sb = new StringBuilder();
        client.pods().inNamespace(NS).list().getItems().forEach(p -> sb.append(p.getMetadata().getName())
                .append('@').append(p.getMetadata().getResourceVersion()).append(';'));
        client.resources(SandboxPool.class).inNamespace(NS).list().getItems().forEach(p -> sb.append(p.getMetadata().getName())
                .append('@').append(p.getMetadata().getResourceVersion()).append(';'));
        client.network().v1().networkPolicies().inNamespace(NS).list().getItems().forEach(p -> sb
                .append(p.getMetadata().getName()).append('@').append(p.getMetadata().getResourceVersion()).append(';'));
        return sb.toString();
    }

    /** Runs "pod exec" commands on this machine: enough to exercise the shell-based launch and files. */
    static final class LocalShellExec implements PodExec {
        final List<String> podsUsed = new CopyOnWriteArrayList<>();

        @Override
        public Process exec(String namespace, String pod, String container, List<String> argv, boolean stdin) {
            podsUsed.add(pod);
            ProcessBuilder pb = new ProcessBuilder(argv);
            if (!stdin) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            }
            try {
                return pb.start();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
