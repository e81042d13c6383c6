package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.manager.store.StoreConfig;
import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.RegistryAuth;
import io.agentbox.worker.image.RegistryCredentials;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Registry credentials set in a cluster's config at the hub reach that cluster's worker over the
 * tunnel as a live lookup, change with the config and disappear with it.
 */
class RegistryCredentialsTest {
    private static final Duration T = Duration.ofSeconds(60);

    private static String creds(String user, String password) {
        return new RegistryAuth(user, password).toSettingValue().replace("\"", "\\\"");
    }

    @Test
    void credentialsFollowTheClusterConfig(@TempDir Path dir) throws Exception {
        JsonHttp http = new JsonHttp();
        Hub hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withStore(StoreConfig.h2(dir.resolve("hub")))
                .withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0).withManagement("127.0.0.1", 0), null);
        WorkerAgent worker = null;
        try {
            Map<String, String> auth = Map.of("Authorization", "Bearer " + hub.newManagerToken().orElseThrow());
            String token = http.call("POST", hub.managementPort(), "/internal/clusters", auth, "{\"id\":\"c1\"}")
                    .json().get("token").asText();
            assertThat(http.call("PUT", hub.managementPort(), "/internal/templates/base", auth, "{\"poolSize\":0}").status())
                    .isEqualTo(200);
            worker = WorkerAgent.start(URI.create("ws://127.0.0.1:" + hub.tunnelPort() + TunnelProtocol.PATH), "c1", token,
                    WorkerDirs.sandboxDataDir(dir.resolve("c1")));
            RegistryCredentials live = worker.host().registryCredentials();
            assertThat(live.lookup("ghcr.io")).isEmpty();

            String path = "/internal/clusters/c1/config";
            assertThat(http.call("PUT", hub.managementPort(), path, auth, "{\"settings\":{"
                    + "\"registry.auth.ghcr.io\":\"" + creds("bot", "pw-1") + "\","
                    + "\"registry.auth.docker.io\":\"" + creds("hubuser", "pw-hub") + "\","
                    + "\"registry.auth.127.0.0.1:5000\":\"" + creds("local", "pw-local") + "\"}}").status()).isEqualTo(200);
            await().atMost(T).until(() -> live.lookup("ghcr.io").isPresent());
            assertThat(live.lookup("GHCR.io")).contains(new RegistryAuth("bot", "pw-1"));
            assertThat(live.lookup("registry-1.docker.io")).as("Docker Hub's API host is docker.io")
                    .contains(new RegistryAuth("hubuser", "pw-hub"));
            assertThat(live.lookup("127.0.0.1:5000")).contains(new RegistryAuth("local", "pw-local"));
            assertThat(live.lookup("127.0.0.1:5001")).isEmpty();
            assertThat(live.registries()).containsExactly("127.0.0.1:5000", "docker.io", "ghcr.io");
            assertThat(live.lookup("ghcr.io").orElseThrow().toString()).doesNotContain("pw-1");

            assertThat(http.call("PUT", hub.managementPort(), path, auth, "{\"settings\":{"
                    + "\"registry.auth.ghcr.io\":\"" + creds("bot", "pw-2") + "\"}}").status()).isEqualTo(200);
            await().atMost(T).until(() -> live.lookup("ghcr.io").equals(Optional.of(new RegistryAuth("bot", "pw-2"))));
            assertThat(live.lookup("docker.io")).isEmpty();

            assertThat(http.call("PUT", hub.managementPort(), path, auth, "{\"settings\":{}}").status()).isEqualTo(200);
            await().atMost(T).until(() -> live.registries().isEmpty());
        } finally {
            if (worker != null) {
                worker.close();
            }
            hub.close();
        }
    }
}
