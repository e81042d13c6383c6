package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The unmodified E2B JS SDK (pinned in {@code src/test/e2e/package.json}) against {@code agentbox
 * standalone}: every request crosses hub → loopback WebSocket → mux → gRPC → worker → bubblewrap.
 * Runs {@code node --test src/test/e2e/e2b-sdk.test.mjs} once per SDK generation: 2.51.0 (v2
 * create/connect paths) and 2.50.0 (v1 paths, like the Python SDK). Fails (never skips) when
 * Node.js or an SDK is missing: {@code deploy/bin/test-all} installs them.
 */
class StandaloneE2bSdkTest {
    static final Path E2E = Path.of("src/test/e2e").toAbsolutePath();

    @TempDir
    static Path dir;
    static Standalone standalone;

    @BeforeAll
    static void start() throws Exception {
        // isolated network: each sandbox has its own ports, so they can be forwarded (PortProxy)
        standalone = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, new BaseTemplate("isolated", 0),
                Duration.ofSeconds(60), line -> System.out.println("standalone: " + line));
    }

    @AfterAll
    static void stop() {
        if (standalone != null) {
            standalone.close();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void unmodifiedJsSdkPassesAgainstStandalone(String sdkPackage, String version) throws Exception {
        assertThat(E2E.resolve("node_modules/" + sdkPackage + "/package.json"))
                .as("the pinned e2b SDK " + version + " is not installed; run deploy/bin/test-all (or npm ci in " + E2E + ")")
                .exists();
        String key = standalone.hub().newAdminKey().orElseThrow();
        String url = "http://127.0.0.1:" + standalone.hub().apiPort();
        Path log = dir.resolve("node-" + sdkPackage + ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "e2b-sdk.test.mjs"))
                .directory(E2E.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("E2B_DEBUG");
        pb.environment().put("E2B_API_URL", url);
        pb.environment().put("E2B_SANDBOX_URL", url);
        pb.environment().put("E2B_API_KEY", key);
        pb.environment().put("E2B_SDK_PACKAGE", sdkPackage);
        Process node = pb.start();
        boolean done = node.waitFor(400, TimeUnit.SECONDS);
        if (!done) {
            node.descendants().forEach(ProcessHandle::destroyForcibly);
            node.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        assertThat(done).as("node --test timed out:\n" + output).isTrue();
        assertThat(node.exitValue()).as(output).isZero();
        assertThat(output).as("the SDK that ran").contains("e2b SDK under test: " + sdkPackage + " " + version);
        // node's spec reporter summary: every test ran and passed, none skipped
        assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0", "ℹ todo 0").doesNotContain("ℹ pass 0");
        for (int step = 1; step <= 16; step++) {
            assertThat(output).as("acceptance step " + step + " ran").containsPattern("✔ " + step + "\\. ");
        }
    }
}
