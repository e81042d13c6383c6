package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unmodified E2B JS SDK (pinned in {@code src/test/e2e/package.json}) against {@code agentbox
 * standalone}: every request crosses hub → loopback WebSocket → mux → gRPC → worker → bubblewrap.
 * Runs {@code node --test src/test/e2e/e2b-sdk.test.mjs}. Fails (never skips) when Node.js or the
 * SDK is missing: {@code deploy/bin/test-all} installs both.
 */
class StandaloneE2bSdkTest {
    static final Path E2E = Path.of("src/test/e2e").toAbsolutePath();

    @Test
    void unmodifiedJsSdkPassesAgainstStandalone(@TempDir Path dir) throws Exception {
        assertThat(E2E.resolve("node_modules/e2b/package.json"))
                .as("the pinned e2b SDK is not installed; run deploy/bin/test-all (or npm ci in " + E2E + ")")
                .exists();
        try (Standalone standalone = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, Duration.ofSeconds(60),
                line -> System.out.println("standalone: " + line))) {
            String key = standalone.hub().newAdminKey().orElseThrow();
            String url = "http://127.0.0.1:" + standalone.hub().apiPort();
            Path log = dir.resolve("node.log");
            ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "e2b-sdk.test.mjs"))
                    .directory(E2E.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().remove("E2B_DEBUG");
            pb.environment().put("E2B_API_URL", url);
            pb.environment().put("E2B_SANDBOX_URL", url);
            pb.environment().put("E2B_API_KEY", key);
            Process node = pb.start();
            boolean done = node.waitFor(300, TimeUnit.SECONDS);
            if (!done) {
                node.descendants().forEach(ProcessHandle::destroyForcibly);
                node.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println(output);
            assertThat(done).as("node --test timed out:\n" + output).isTrue();
            assertThat(node.exitValue()).as(output).isZero();
            // node's spec reporter summary: every test ran and passed, none skipped
            assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0").doesNotContain("ℹ pass 0");
        }
    }
}
