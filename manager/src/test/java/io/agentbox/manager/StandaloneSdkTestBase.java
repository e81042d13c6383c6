package io.agentbox.manager;

import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.pool.SandboxPools;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One {@code agentbox standalone} per test class for the E2B SDK acceptance files: {@code base} on
 * the isolated network (each sandbox has its own ports, so they can be forwarded), in a temporary
 * data directory, its output echoed with a {@code standalone:} prefix. Beside it runs Debian's
 * {@code docker-registry} on loopback ({@link #registry}), which the worker reaches as an insecure
 * registry, so a test can push an image it built offline and have builds or templates pull it.
 */
abstract class StandaloneSdkTestBase {
    @TempDir
    static Path dir;
    static LocalRegistry registry;
    static Standalone standalone;

    @BeforeAll
    static void startStandalone() throws Exception {
        registry = LocalRegistry.start();
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0).withBase(new BaseTemplate("isolated", 0));
        standalone = Standalone.start(config, SandboxPools.DEFAULT_MAX_SANDBOXES, null,
                RegistrySettings.of(List.of(registry.hostPort())), Duration.ofSeconds(60),
                line -> System.out.println("standalone: " + line));
    }

    @AfterAll
    static void stopStandalone() {
        if (standalone != null) {
            standalone.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    /** The hub's public API, as the SDK's E2B_API_URL. */
    static String apiUrl() {
        return "http://127.0.0.1:" + standalone.hub().apiPort();
    }
}
