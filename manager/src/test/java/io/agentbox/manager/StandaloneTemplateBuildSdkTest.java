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
 * {@code Template.build} end to end: the unmodified E2B JS SDK ({@code src/test/e2e/e2b-templates.test.mjs},
 * e2b-templates-snapshots.md §13 items 1-9) against {@code agentbox standalone}. Builds run on the
 * standalone's worker in real crun sandboxes (fromTemplate('base'), offline); the built templates
 * are synced back to it and served. Once per SDK generation: 2.51.0 and 2.50.0. Fails (never
 * skips) when Node.js or the SDK is missing.
 */
class StandaloneTemplateBuildSdkTest {
    static final Path E2E = E2bAcceptance.E2E;
    static final int STEPS = 9;

    @TempDir
    static Path dir;
    static Standalone standalone;

    @BeforeAll
    static void start() throws Exception {
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
    void templateBuildWorksWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        assertThat(E2E.resolve("node_modules/" + sdkPackage + "/package.json"))
                .as("the pinned e2b SDK " + version + " is not installed; run deploy/bin/test-all (or npm ci in " + E2E + ")")
                .exists();
        String key = standalone.hub().newAdminKey().orElseThrow();
        String url = "http://127.0.0.1:" + standalone.hub().apiPort();
        Path log = dir.resolve("node-templates-" + sdkPackage + ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "--test-concurrency=1",
                "e2b-templates.test.mjs")).directory(E2E.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("E2B_DEBUG");
        pb.environment().put("E2B_API_URL", url);
        pb.environment().put("E2B_SANDBOX_URL", url);
        pb.environment().put("E2B_API_KEY", key);
        pb.environment().put("E2B_TEAM", "admin");
        pb.environment().put("E2B_SDK_PACKAGE", sdkPackage);
        Process node = pb.start();
        boolean done = node.waitFor(600, TimeUnit.SECONDS);
        if (!done) {
            node.descendants().forEach(ProcessHandle::destroyForcibly);
            node.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        assertThat(done).as("node --test timed out:\n" + output).isTrue();
        assertThat(node.exitValue()).as(output).isZero();
        assertThat(output).contains("e2b SDK under test: " + sdkPackage + " " + version);
        assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0", "ℹ todo 0").doesNotContain("ℹ pass 0");
        for (int step = 1; step <= STEPS; step++) {
            assertThat(output).as("template step " + step + " ran").containsPattern("✔ " + step + "\\. ");
        }
    }
}
