package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.worker.runtime.kubernetes.reconcile.PoolNetworkPolicy;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The deployment files give the worker what its pool NetworkPolicies need: the Role lets it
 * manage them, and the worker's pods carry the labels the policies admit ingress from. (Whether
 * a real API server's RBAC agrees is for a real cluster to show; the mock has no RBAC.)
 */
class KubeDeployPolicyTest {
    private static final Path WORKER = Path.of("..", "deploy", "kubernetes", "worker");

    @Test
    void workerRoleManagesNetworkPolicies() throws IOException {
        List<Role> roles = objects(WORKER.resolve("rbac.yaml"), Role.class);
        assertThat(roles).singleElement().satisfies(role -> {
            List<PolicyRule> rules = role.getRules().stream()
                    .filter(r -> r.getApiGroups().contains("networking.k8s.io") && r.getResources().contains("networkpolicies"))
                    .toList();
            assertThat(rules).singleElement().satisfies(r -> assertThat(r.getVerbs())
                    .contains("get", "list", "watch", "create", "update", "delete"));
        });
    }

    @Test
    void workerPodsCarryTheLabelsPoliciesAdmit() throws IOException {
        List<Deployment> deployments = objects(WORKER.resolve("worker.yaml"), Deployment.class);
        assertThat(deployments).singleElement().satisfies(d -> assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(PoolNetworkPolicy.WORKER_POD_LABELS));
    }

    private static <T> List<T> objects(Path file, Class<T> type) throws IOException {
        List<T> out = new ArrayList<>();
        for (String doc : Files.readString(file).split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            Object parsed = Serialization.unmarshal(doc);
            if (type.isInstance(parsed)) {
                out.add(type.cast(parsed));
            }
        }
        return out;
    }
}
