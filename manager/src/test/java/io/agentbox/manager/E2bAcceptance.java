package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the E2B acceptance file ({@code src/test/e2e/e2b-sdk.test.mjs}) with the unmodified JS SDK
 * against a running hub and checks that every numbered step ran and passed, none skipped. Fails
 * (never skips) when Node.js or the SDK is missing: {@code deploy/bin/test-all} installs them.
 */
final class E2bAcceptance {
    static final Path E2E = Path.of("src/test/e2e").toAbsolutePath();
    /** Numbered steps of the acceptance file. */
    static final List<Integer> STEPS = java.util.stream.IntStream.rangeClosed(1, 16).boxed().toList();

    private E2bAcceptance() {}

    /**
     * @param sdkPackage npm package of the SDK ({@code e2b} = 2.51.0, {@code e2b-2-50} = 2.50.0)
     * @param template the template every step creates its sandboxes from
     * @return the node output
     */
    static String run(String url, String key, String sdkPackage, String version, String template, Path log) throws Exception {
        return run("e2b-sdk.test.mjs", STEPS, url, key, sdkPackage, version, template, log);
    }

    /**
     * As {@link #run(String, String, String, String, String, Path)} for another acceptance file,
     * whose numbered steps are {@code steps} (each must run and pass).
     */
    static String run(String file, java.util.Collection<Integer> steps, String url, String key, String sdkPackage,
                      String version, String template, Path log) throws Exception {
        assertThat(E2E.resolve("node_modules/" + sdkPackage + "/package.json"))
                .as("the pinned e2b SDK " + version + " is not installed; run deploy/bin/test-all (or npm ci in " + E2E + ")")
                .exists();
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", file))
                .directory(E2E.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("E2B_DEBUG");
        pb.environment().put("E2B_API_URL", url);
        pb.environment().put("E2B_SANDBOX_URL", url);
        pb.environment().put("E2B_API_KEY", key);
        pb.environment().put("E2B_SDK_PACKAGE", sdkPackage);
        pb.environment().put("E2B_TEMPLATE", template);
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
        assertThat(output).as("the template that ran").contains("template under test: " + template);
        // node's spec reporter summary: every test ran and passed, none skipped
        assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0", "ℹ todo 0").doesNotContain("ℹ pass 0");
        for (int step : steps) {
            assertThat(output).as("acceptance step " + step + " ran").containsPattern("✔ " + step + "\\. ");
        }
        return output;
    }
}
