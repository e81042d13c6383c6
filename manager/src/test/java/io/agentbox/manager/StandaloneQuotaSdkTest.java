package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.store.TeamLimits;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A team quota seen through the unmodified E2B JS SDK (2.51.0) against {@code agentbox standalone}
 * with real sandboxes: {@code src/test/e2e/quota.test.mjs}. Fails (never skips) when Node.js or
 * the SDK is missing: {@code deploy/bin/test-all} installs them.
 */
class StandaloneQuotaSdkTest {
    @Test
    void theSdkRaisesRateLimitErrorPastTheTeamsSandboxLimit(@TempDir Path dir) throws Exception {
        Path e2e = StandaloneE2bSdkTest.E2E;
        assertThat(e2e.resolve("node_modules/e2b/package.json")).as("run npm ci in " + e2e).exists();
        try (Standalone standalone = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, new BaseTemplate(null, 2),
                Duration.ofSeconds(60), line -> { })) {
            standalone.hub().store().teamLimitStore().set("admin", new TeamLimits(1, null));
            String url = "http://127.0.0.1:" + standalone.hub().apiPort();
            Path log = dir.resolve("node.log");
            ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "quota.test.mjs"))
                    .directory(e2e.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().remove("E2B_DEBUG");
            pb.environment().put("E2B_API_URL", url);
            pb.environment().put("E2B_SANDBOX_URL", url);
            pb.environment().put("E2B_API_KEY", standalone.hub().newAdminKey().orElseThrow());
            Process node = pb.start();
            boolean done = node.waitFor(120, TimeUnit.SECONDS);
            if (!done) {
                node.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(done).as("node timed out:\n" + output).isTrue();
            assertThat(node.exitValue()).as(output).isZero();
            assertThat(output).contains("ℹ pass 1", "ℹ fail 0", "ℹ skipped 0");
        }
    }
}
