package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplateSpec;
import io.agentbox.worker.runtime.kubernetes.reconcile.PodFactory;
import io.agentbox.worker.runtime.kubernetes.reconcile.PoolNetworkPolicy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hub template's image, limits and network as pods and NetworkPolicies, on fabric8's mock
 * API server in CRUD mode. The mock stores and serves the objects; it neither pulls images,
 * enforces limits, nor has a CNI enforcing NetworkPolicy, nor a garbage collector (see
 * docs/kubernetes-runtime.md): these tests prove what the worker asks the API for.
 */
class KubeTemplatePodTest {
    private static final String PYTHON = "docker.io/library/python:3.12";
    private static final String NODE = "docker.io/library/node:22";
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final KubeMock mock = new KubeMock();

    @AfterEach
    void tearDown() {
        mock.close();
    }

    @Test
    void podsRunTheTemplatesImageWithItsLimitsAsResources() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, KubeMock.template("py", 2).setImage(PYTHON).setCpuCount(2).setMemoryMb(512).setDiskSizeMb(1024)
                .setPidsLimit(300).build());
        mock.settle("py", 2);

        for (Pod pod : mock.pods("py")) {
            Container sandbox = pod.getSpec().getContainers().get(0);
            assertThat(sandbox.getImage()).isEqualTo(PYTHON);
            assertThat(sandbox.getCommand()).startsWith("/bin/sh", "-c"); // the idle loop, not the image's own command
            Map<String, Quantity> want = Map.of("cpu", new Quantity("2"), "memory", new Quantity("512Mi"),
                    "ephemeral-storage", new Quantity("1024Mi"));
            assertThat(sandbox.getResources().getLimits()).isEqualTo(want);
            assertThat(sandbox.getResources().getRequests()).isEqualTo(want);
            assertThat(pod.getMetadata().getAnnotations()).containsEntry(PodFactory.PIDS_LIMIT, "300")
                    .containsEntry(PodFactory.NETWORK, "isolated");
            assertThat(pod.getSpec().getHostNetwork()).isFalse();
        }
        SandboxSettings stored = mock.poolResource("py").getSpec().getSandbox();
        assertThat(stored.getImage()).isEqualTo(PYTHON);
        assertThat(List.of(stored.getCpuCount(), stored.getMemoryMb(), stored.getDiskSizeMb(), stored.getPidsLimit()))
                .containsExactly(2, 512, 1024, 300);
        assertThat(stored.getNetwork()).isEqualTo("isolated");
    }

    @Test
    void noImageMeansTheWorkersSandboxImageAndNoLimitsMeansNoResources() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, "plain", 1);
        mock.settle("plain", 1);

        Pod pod = mock.pods("plain").get(0);
        Container sandbox = pod.getSpec().getContainers().get(0);
        assertThat(sandbox.getImage()).isEqualTo(KubeRuntimeConfig.DEFAULT_IMAGE);
        assertThat(sandbox.getResources()).satisfiesAnyOf(
                r -> assertThat(r).isNull(),
                r -> assertThat(r.getLimits()).isNullOrEmpty());
        // Kubernetes cannot limit PIDs per pod; the default the template would get elsewhere is recorded
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(PodFactory.PIDS_LIMIT, "1024");
    }

    @Test
    void hubTemplateSetsTheSandboxContainerOfAnAdminsSandboxTemplateAndLeavesTheRest() {
        SandboxTemplate admin = new SandboxTemplate();
        admin.setMetadata(new ObjectMetaBuilder().withName("tuned").build());
        SandboxTemplateSpec spec = new SandboxTemplateSpec();
        spec.setPodTemplate(new PodTemplateSpecBuilder().withNewSpec()
                .addToContainers(new ContainerBuilder().withName("main").withImage("registry.example.org/admin:1")
                        .withCommand("/bin/sh", "-c", "sleep infinity")
                        .withNewResources().addToRequests("cpu", new Quantity("250m")).addToRequests("memory", new Quantity("2Gi"))
                        .endResources().build())
                .addToContainers(new ContainerBuilder().withName("helper").withImage("registry.example.org/helper:1").build())
                .endSpec().build());
        admin.setSpec(spec);
        mock.client.resources(SandboxTemplate.class).resource(admin).create();

        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, KubeMock.template("tuned", 1).setImage(PYTHON).setCpuCount(1).setMemoryMb(512).build());
        mock.settle("tuned", 1);

        Pod pod = mock.pods("tuned").get(0);
        Container main = pod.getSpec().getContainers().get(0);
        assertThat(main.getName()).isEqualTo("main");
        assertThat(main.getImage()).isEqualTo(PYTHON);
        assertThat(main.getCommand()).containsExactly("/bin/sh", "-c", "sleep infinity");
        assertThat(main.getResources().getLimits()).isEqualTo(Map.of("cpu", new Quantity("1"), "memory", new Quantity("512Mi")));
        // the admin's smaller CPU request stays (overcommitting idle pods); the memory request is cut to the limit
        assertThat(main.getResources().getRequests())
                .isEqualTo(Map.of("cpu", new Quantity("250m"), "memory", new Quantity("512Mi")));
        Container helper = pod.getSpec().getContainers().get(1);
        assertThat(helper.getImage()).isEqualTo("registry.example.org/helper:1");
        assertThat(helper.getResources()).satisfiesAnyOf(r -> assertThat(r).isNull(),
                r -> assertThat(r.getLimits()).isNullOrEmpty());

        // without an image of its own, the template runs the admin's
        pool.update(KubeMock.template("tuned", 1).setCpuCount(1).setMemoryMb(512).build());
        await().atMost(WAIT).untilAsserted(() -> assertThat(idleImages("tuned")).containsExactly("registry.example.org/admin:1"));
    }

    @Test
    void isolatedPoolGetsAPolicyThatAllowsPublicEgressAndDnsAndIngressOnlyFromTheWorker() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, "iso", 2); // network left empty: isolated is the default
        mock.open(rt, "other", 1);
        mock.settle("iso", 2);
        mock.settle("other", 1);

        NetworkPolicy policy = awaitPolicy("iso");
        SandboxPool pool = mock.poolResource("iso");
        assertThat(policy.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("SandboxPool");
            assertThat(o.getName()).isEqualTo("iso");
            assertThat(o.getUid()).isEqualTo(pool.getMetadata().getUid());
        });
        Map<String, String> selector = policy.getSpec().getPodSelector().getMatchLabels();
        assertThat(policy.getSpec().getPodSelector().getMatchExpressions()).isNullOrEmpty();
        // the API's own label selection with the policy's selector finds exactly this pool's pods
        assertThat(mock.client.pods().inNamespace(KubeMock.NS).withLabels(selector).list().getItems())
                .extracting(PodContract::name)
                .containsExactlyInAnyOrderElementsOf(mock.pods("iso").stream().map(PodContract::name).toList());
        assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");

        assertThat(policy.getSpec().getIngress()).singleElement().satisfies(rule -> {
            assertThat(rule.getPorts()).isNullOrEmpty();
            assertThat(rule.getFrom()).singleElement().satisfies(peer -> {
                assertThat(peer.getNamespaceSelector()).isNull(); // the worker's own namespace only
                assertThat(peer.getIpBlock()).isNull();
                assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "agentbox-worker"));
            });
        });

        List<NetworkPolicyEgressRule> egress = policy.getSpec().getEgress();
        assertThat(egress).hasSize(2);
        NetworkPolicyEgressRule internet = egress.get(0);
        assertThat(internet.getPorts()).isNullOrEmpty();
        assertThat(internet.getTo()).extracting(NetworkPolicyPeer::getPodSelector).containsOnlyNulls();
        assertThat(internet.getTo()).extracting(NetworkPolicyPeer::getNamespaceSelector).containsOnlyNulls();
        Map<String, List<String>> blocks = internet.getTo().stream().map(NetworkPolicyPeer::getIpBlock)
                .collect(Collectors.toMap(IPBlock::getCidr, IPBlock::getExcept));
        assertThat(blocks).containsOnlyKeys("0.0.0.0/0", "::/0");
        assertThat(blocks.get("0.0.0.0/0")).containsExactlyInAnyOrder("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8");
        assertThat(blocks.get("::/0")).containsExactlyInAnyOrder("fc00::/7", "fe80::/10", "::1/128", "::ffff:0:0/96");
        NetworkPolicyEgressRule dns = egress.get(1);
        assertThat(dns.getTo()).isNullOrEmpty();
        assertThat(dns.getPorts()).extracting(p -> p.getProtocol() + "/" + p.getPort().getIntVal())
                .containsExactlyInAnyOrder("UDP/53", "TCP/53");
    }

    @Test
    void noneNetworkDeniesAllTrafficBothWays() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, KubeMock.template("sealed", 1).setNetwork("none").build());
        mock.settle("sealed", 1);

        NetworkPolicy policy = awaitPolicy("sealed");
        assertDenyAll(policy, "sealed");
        assertThat(mock.pods("sealed").get(0).getSpec().getHostNetwork()).isFalse();
    }

    @Test
    void hostNetworkPodsShareTheNodesNetworkAndGetNoPolicy() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, KubeMock.template("onhost", 1).setNetwork("host").build());
        mock.settle("onhost", 1);

        Pod pod = mock.pods("onhost").get(0);
        assertThat(pod.getSpec().getHostNetwork()).isTrue();
        assertThat(pod.getSpec().getDnsPolicy()).isEqualTo("ClusterFirstWithHostNet");
        // the reconcile that created the pod has already decided the policy
        assertThat(policy("onhost")).isNull();
    }

    @Test
    void templateUpdatesReplaceIdlePodsAndRewriteThePolicyWhileClaimedPodsKeepTheirs() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        KubePool pool = mock.open(rt, KubeMock.template("app", 2).setImage(PYTHON).build());
        await().atMost(WAIT).until(() -> rt.isLeader() && pool.idle() == 2);
        String claimedPod = ((KubeSandbox) pool.claim(KubeMock.claim("app"))).confirmed().get();
        mock.settle("app", 2);
        Set<String> before = mock.podsInPhase("app", PodPhase.IDLE).stream().map(PodContract::name).collect(Collectors.toSet());
        String policyUid = awaitPolicy("app").getMetadata().getUid();

        pool.update(KubeMock.template("app", 2).setImage(NODE).setNetwork("none").build());
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(idleImages("app")).containsExactly(NODE);
            assertThat(mock.podsInPhase("app", PodPhase.IDLE)).hasSize(2).extracting(PodContract::name)
                    .doesNotContainAnyElementsOf(before);
            assertDenyAll(policy("app"), "app");
        });
        assertThat(policy("app").getMetadata().getUid()).as("updated in place").isEqualTo(policyUid);
        Pod claimed = mock.client.pods().inNamespace(KubeMock.NS).withName(claimedPod).get();
        assertThat(claimed).as("a claimed pod stays until released").isNotNull();
        assertThat(claimed.getSpec().getContainers().get(0).getImage()).isEqualTo(PYTHON);

        pool.update(KubeMock.template("app", 2).setImage(NODE).setNetwork("host").build());
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(policy("app")).isNull();
            assertThat(mock.podsInPhase("app", PodPhase.IDLE)).hasSize(2)
                    .allSatisfy(p -> assertThat(p.getSpec().getHostNetwork()).isTrue());
        });

        pool.update(KubeMock.template("app", 2).setImage(NODE).build());
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(policy("app")).isNotNull();
            assertThat(policy("app").getSpec().getEgress()).hasSize(2);
            assertThat(mock.podsInPhase("app", PodPhase.IDLE)).hasSize(2)
                    .allSatisfy(p -> assertThat(p.getSpec().getHostNetwork()).isFalse());
        });
        mock.settle("app", 2);
    }

    /**
     * A policy of another revision (as an older worker wrote it) is rewritten; a deleted one comes
     * back. Only the revision is compared, not the spec: the API server may fill in defaults.
     */
    @Test
    void aDeletedOrOutdatedPolicyIsRestored() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, KubeMock.template("kept", 1).setNetwork("none").build());
        mock.settle("kept", 1);
        NetworkPolicy policy = awaitPolicy("kept");

        NetworkPolicy outdated = new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder(policy)
                .editSpec().withPolicyTypes("Ingress").endSpec().editMetadata()
                .addToAnnotations(io.agentbox.worker.runtime.kubernetes.reconcile.Revision.ANNOTATION, "older").endMetadata()
                .build();
        mock.client.network().v1().networkPolicies().inNamespace(KubeMock.NS).resource(outdated).update();
        await().atMost(WAIT).untilAsserted(() -> assertDenyAll(policy("kept"), "kept"));

        mock.client.network().v1().networkPolicies().inNamespace(KubeMock.NS).withName(PoolNetworkPolicy.name("kept")).delete();
        await().atMost(WAIT).untilAsserted(() -> assertDenyAll(policy("kept"), "kept"));
    }

    @Test
    void deletingThePoolRemovesItsPolicy() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        mock.open(rt, "gone", 1);
        mock.settle("gone", 1);
        awaitPolicy("gone");

        // a real API server's garbage collector deletes the policy through its owner reference
        // (checked above); the mock has none, so this proves the worker's own clean-up
        mock.client.resources(SandboxPool.class).inNamespace(KubeMock.NS).withName("gone").delete();
        await().atMost(WAIT).untilAsserted(() -> assertThat(policy("gone")).isNull());
    }

    @Test
    void aTemplateThatCannotBecomeAPodIsRefusedNamingTheField() {
        KubernetesRuntime rt = mock.runtime("worker-a");
        assertThatThrownBy(() -> mock.open(rt, KubeMock.template("bad", 1).setNetwork("bridge").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessageContaining("template 'bad'").hasMessageContaining("network").hasMessageContaining("bridge");
        assertThatThrownBy(() -> mock.open(rt, KubeMock.template("bad", 1).setImage("Python:3.12").build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("template 'bad'");
        assertThat(mock.poolResource("bad")).isNull();

        KubePool pool = mock.open(rt, KubeMock.template("good", 1).setImage(PYTHON).build());
        assertThatThrownBy(() -> pool.update(KubeMock.template("good", 1).setImage(NODE).setNetwork("bridge").build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("bridge");
        assertThat(mock.poolResource("good").getSpec().getSandbox().getImage()).isEqualTo(PYTHON);
        mock.settle("good", 1);
    }

    private List<String> idleImages(String pool) {
        return mock.podsInPhase(pool, PodPhase.IDLE).stream().map(p -> p.getSpec().getContainers().get(0).getImage())
                .distinct().toList();
    }

    private NetworkPolicy policy(String pool) {
        return mock.client.network().v1().networkPolicies().inNamespace(KubeMock.NS).withName(PoolNetworkPolicy.name(pool)).get();
    }

    private NetworkPolicy awaitPolicy(String pool) {
        await().atMost(WAIT).until(() -> policy(pool) != null);
        return policy(pool);
    }

    private static void assertDenyAll(NetworkPolicy policy, String pool) {
        assertThat(policy).isNotNull();
        assertThat(policy.getSpec().getPodSelector().getMatchLabels())
                .isEqualTo(Map.of(PodContract.POOL, pool, PodContract.MANAGED_BY, PodContract.MANAGER));
        assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
        assertThat(policy.getSpec().getIngress()).isNullOrEmpty();
        assertThat(policy.getSpec().getEgress()).isNullOrEmpty();
    }
}
