package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.store.StoreConfig;
import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.worker.image.HostToolsImage;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The E2B acceptance file on a template with an image: the test builds a Debian-like image offline
 * from this host's programs (bash, node, coreutils, script, inotifywait and their libraries, a
 * passwd without {@code user}: {@link HostToolsImage}), pushes it to Debian's docker-registry on
 * loopback, and a standalone started with {@code --insecure-registry} pulls it for the template
 * {@code e2e-image}; then every step of the unmodified JS SDK 2.51.0 runs on sandboxes of that
 * image, {@code user: 'root'} included.
 */
class StandaloneImageE2bSdkTest {
    static final String TEMPLATE = "e2e-image";

    @TempDir
    static Path dir;
    static LocalRegistry registry;
    static Standalone standalone;
    static String image;

    @BeforeAll
    static void start() throws Exception {
        registry = LocalRegistry.start();
        TestImages.Image tools = HostToolsImage.build("e2e/tools:1", HostToolsImage.E2B_ACCEPTANCE_TOOLS);
        new RegistryPush(registry).push("e2e/tools", "1", tools.layers().stream().map(TestImages.Layer::blob).toList(),
                tools.config(), ManifestKind.OCI);
        image = registry.hostPort() + "/e2e/tools:1";
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withStore(StoreConfig.h2(dir.resolve("data")))
                .withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0).withManagement("127.0.0.1", 0)
                .withBase(new BaseTemplate("isolated", 0));
        standalone = Standalone.start(config, 64, null, RegistrySettings.of(List.of(registry.hostPort())),
                Duration.ofSeconds(60), line -> System.out.println("standalone: " + line));
    }

    @AfterAll
    static void stop() {
        if (standalone != null) {
            standalone.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void unmodifiedJsSdkPassesOnAnImageTemplate() throws Exception {
        Hub hub = standalone.hub();
        String token = hub.newManagerToken().orElseThrow();
        JsonHttp http = new JsonHttp();
        Map<String, String> auth = Map.of("Authorization", "Bearer " + token);
        JsonHttp.Res created = http.call("POST", hub.managementPort(), "/internal/templates", auth,
                "{\"name\":\"" + TEMPLATE + "\",\"poolSize\":2,\"image\":\"" + image + "\",\"network\":\"isolated\"}");
        assertThat(created.status()).as(String.valueOf(created.json())).isEqualTo(201);
        Awaitility.await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).until(() -> {
            JsonNode t = http.call("GET", hub.managementPort(), "/internal/templates/" + TEMPLATE, auth, null).json();
            assertThat(t.path("status").asText()).as(String.valueOf(t)).isNotEqualTo("error");
            return "ready".equals(t.path("status").asText());
        });
        String key = hub.newAdminKey().orElseThrow();
        E2bAcceptance.run("http://127.0.0.1:" + hub.apiPort(), key, "e2b", "2.51.0", TEMPLATE, dir.resolve("node-image.log"));
    }
}
