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
 * Pause, resume, the create-time lifecycle and metrics with the unmodified E2B JS SDK against
 * {@code agentbox standalone} on real crun sandboxes: {@code src/test/e2e/e2b-pause.test.mjs}
 * (items 10–17 and 23 of e2b-templates-snapshots.md §13), once with SDK 2.51.0 and once with
 * 2.50.0 (v1 connect path, pause body {@code {"memory":true}}). Fails (never skips) when Node.js
 * or the SDKs are missing: {@code deploy/bin/test-all} installs them.
 */
class StandalonePauseSdkTest {
    /** Numbered items of the acceptance outline the file covers. */
    static final List<Integer> ITEMS = List.of(10, 11, 12, 13, 14, 15, 16, 17, 23);

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
    void pauseResumeLifecycleAndMetricsWorkWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        Path e2e = E2bAcceptance.E2E;
        assertThat(e2e.resolve("node_modules/" + sdkPackage + "/package.json"))
                .as("the pinned e2b SDK " + version + " is not installed; run deploy/bin/test-all (or npm ci in " + e2e + ")")
                .exists();
        String url = "http://127.0.0.1:" + standalone.hub().apiPort();
        Path log = dir.resolve("node-pause-" + sdkPackage + ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "e2b-pause.test.mjs"))
                .directory(e2e.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("E2B_DEBUG");
        pb.environment().put("E2B_API_URL", url);
        pb.environment().put("E2B_SANDBOX_URL", url);
        pb.environment().put("E2B_API_KEY", standalone.hub().newAdminKey().orElseThrow());
        pb.environment().put("E2B_SDK_PACKAGE", sdkPackage);
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
        assertThat(output).contains("e2b SDK under test: " + sdkPackage + " " + version);
        assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0", "ℹ todo 0").doesNotContain("ℹ pass 0");
        for (int item : ITEMS) {
            assertThat(output).as("acceptance item " + item + " ran").containsPattern("✔ " + item + "\\. ");
        }
    }
}
