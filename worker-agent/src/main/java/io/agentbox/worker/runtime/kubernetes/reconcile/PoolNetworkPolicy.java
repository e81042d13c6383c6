package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlockBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPortBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpecBuilder;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The NetworkPolicy (networking.k8s.io/v1) that confines a pool's pods, one per pool, named
 * {@code agentbox-pool-<pool>}, owned by the SandboxPool (deleted with it) and selecting the
 * pods by {@code agentbox.io/pool} and {@code agentbox.io/managed-by}.
 *
 * <ul>
 *   <li>{@code isolated}: ingress only from the worker's own pods ({@link #WORKER_POD_LABELS});
 *       egress to every IPv4 address but {@link #PRIVATE_V4} and every IPv6 address but
 *       {@link #PRIVATE_V6} (so: the internet, but not the pod and service networks, the nodes,
 *       the cloud metadata endpoint, loopback), plus DNS (UDP and TCP port 53) to any address.
 *   <li>{@code none}: both policy types with no rule: nothing in, nothing out.
 *   <li>{@code host}: no policy ({@code null}); NetworkPolicy does not apply to host-network pods.
 * </ul>
 *
 * <p>Rules follow the NetworkPolicy API reference (kubernetes.io, "Network Policies"): a policy
 * listing a type with no rule denies that direction; peers in one rule are alternatives.
 */
public final class PoolNetworkPolicy {
    /** Labels of the worker Deployment's pods (deploy/kubernetes/worker/worker.yaml). */
    public static final Map<String, String> WORKER_POD_LABELS = Map.of("app.kubernetes.io/name", "agentbox-worker");
    /** IPv4 ranges an isolated sandbox must not reach: RFC 1918, CGNAT, link-local, loopback. */
    public static final List<String> PRIVATE_V4 =
            List.of("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8");
    /** IPv6 ranges an isolated sandbox must not reach: unique local, link-local, loopback, IPv4-mapped. */
    public static final List<String> PRIVATE_V6 = List.of("fc00::/7", "fe80::/10", "::1/128", "::ffff:0:0/96");

    private PoolNetworkPolicy() {}

    /** Name of the pool's policy. */
    public static String name(String poolName) {
        return "agentbox-pool-" + poolName;
    }

    /** The policy the pool's network mode asks for, carrying its {@link Revision}; null for {@code host}. */
    public static NetworkPolicy of(SandboxPool pool) {
        SandboxSettings settings = pool.getSpec().getSandbox();
        String network = settings == null ? SandboxSettings.ISOLATED : settings.networkOrDefault();
        String poolName = pool.getMetadata().getName();
        NetworkPolicySpec spec;
        switch (network) {
            case SandboxSettings.HOST -> {
                return null;
            }
            case SandboxSettings.NONE -> spec = base(poolName).build();
            case SandboxSettings.ISOLATED -> spec = base(poolName).withIngress(fromWorker()).withEgress(internet(), dns()).build();
            default -> throw new IllegalArgumentException("pool " + poolName + ": unknown network '" + network + "'");
        }
        Map<String, String> labels = new TreeMap<>(Map.of(PodContract.POOL, poolName, PodContract.MANAGED_BY, PodContract.MANAGER));
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withName(name(poolName))
                .withNamespace(pool.getMetadata().getNamespace())
                .withLabels(labels)
                .withAnnotations(Map.of(Revision.ANNOTATION, Revision.of(labels, spec), PodFactory.NETWORK, network))
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(pool.getApiVersion())
                        .withKind(pool.getKind()).withName(poolName).withUid(pool.getMetadata().getUid()).build())
                .endMetadata()
                .withSpec(spec)
                .build();
    }

    /** The pods of the pool; both directions governed. */
    private static NetworkPolicySpecBuilder base(String poolName) {
        LabelSelector pods = new LabelSelectorBuilder()
                .withMatchLabels(new TreeMap<>(Map.of(PodContract.POOL, poolName, PodContract.MANAGED_BY, PodContract.MANAGER)))
                .build();
        return new NetworkPolicySpecBuilder().withPodSelector(pods).withPolicyTypes("Ingress", "Egress");
    }

    private static NetworkPolicyIngressRule fromWorker() {
        return new NetworkPolicyIngressRuleBuilder().withFrom(new NetworkPolicyPeerBuilder()
                .withPodSelector(new LabelSelectorBuilder().withMatchLabels(new TreeMap<>(WORKER_POD_LABELS)).build())
                .build()).build();
    }

    private static NetworkPolicyEgressRule internet() {
        return new NetworkPolicyEgressRuleBuilder().withTo(
                new NetworkPolicyPeerBuilder().withIpBlock(new IPBlockBuilder().withCidr("0.0.0.0/0").withExcept(PRIVATE_V4)
                        .build()).build(),
                new NetworkPolicyPeerBuilder().withIpBlock(new IPBlockBuilder().withCidr("::/0").withExcept(PRIVATE_V6)
                        .build()).build()).build();
    }

    /** Port 53 to any address: the cluster DNS service, or a node-local cache on a link-local address. */
    private static NetworkPolicyEgressRule dns() {
        return new NetworkPolicyEgressRuleBuilder().withPorts(
                new NetworkPolicyPortBuilder().withProtocol("UDP").withPort(new IntOrString(53)).build(),
                new NetworkPolicyPortBuilder().withProtocol("TCP").withPort(new IntOrString(53)).build()).build();
    }
}
