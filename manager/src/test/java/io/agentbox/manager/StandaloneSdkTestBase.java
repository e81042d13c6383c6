package io.agentbox.manager;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * One {@code agentbox standalone} per test class for the E2B SDK acceptance files: {@code base} on
 * the isolated network (each sandbox has its own ports, so they can be forwarded), in a temporary
 * data directory, its output echoed with a {@code standalone:} prefix.
 */
abstract class StandaloneSdkTestBase {
    @TempDir
    static Path dir;
    static Standalone standalone;

    @BeforeAll
    static void startStandalone() throws Exception {
        standalone = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, new BaseTemplate("isolated", 0),
                Duration.ofSeconds(60), line -> System.out.println("standalone: " + line));
    }

    @AfterAll
    static void stopStandalone() {
        if (standalone != null) {
            standalone.close();
        }
    }

    /** The hub's public API, as the SDK's E2B_API_URL. */
    static String apiUrl() {
        return "http://127.0.0.1:" + standalone.hub().apiPort();
    }
}
