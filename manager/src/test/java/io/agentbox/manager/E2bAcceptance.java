package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the E2B acceptance file ({@code src/test/e2e/e2b-sdk.test.mjs}) with the unmodified JS SDK
 * against a running hub and checks that every numbered step ran and passed, none skipped. Fails
 * (never skips) when Node.js or the SDK is missing: {@code deploy/bin/test-all} installs them.
 */
final class E2bAcceptance {
    static final Path E2E = Path.of("src/test/e2e").toAbsolutePath();
    /** Numbered steps of the acceptance file. */
    static final int STEPS = 16;

    private E2bAcceptance() {}

    /**
     * @param sdkPackage npm package of the SDK ({@code e2b} = 2.51.0, {@code e2b-2-50} = 2.50.0)
     * @param template the template every step creates its sandboxes from
     * @return the node output
     */
    static String run(String url, String key, String sdkPackage, String version, String template, Path log) throws Exception {
        List<Integer> steps = new java.util.ArrayList<>();
        for (int step = 1; step <= STEPS; step++) {
            steps.add(step);
        }
        String output = run("e2b-sdk.test.mjs", steps, url, key, sdkPackage, version, Map.of("E2B_TEMPLATE", template), 400, log);
        assertThat(output).as("the template that ran").contains("template under test: " + template);
        return output;
    }

    /**
     * Runs one acceptance file of {@link #E2E} with {@code node --test} (one test at a time) and
     * checks that it used the SDK asked for, that every test passed and none was skipped, and that
     * each numbered step in {@code steps} ran ({@code ✔ N. …} in the spec reporter's output).
     *
     * @param env extra environment for the file (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY and
     *     E2B_SDK_PACKAGE are set from the other arguments)
     * @param timeoutSeconds the whole file's limit; its processes are killed past it
     * @return the node output
     */
    static String run(String file, List<Integer> steps, String url, String key, String sdkPackage, String version,
                      Map<String, String> env, int timeoutSeconds, Path log) throws Exception {
        assertThat(E2E.resolve("node_modules/" + sdkPackage + "/package.json"))
                .as("the pinned e2b SDK " + version + " is not installed; run deploy/bin/test-all (or npm ci in " + E2E + ")")
                .exists();
        Map<String, String> all = new java.util.HashMap<>(env);
        all.put("E2B_API_URL", url);
        all.put("E2B_SANDBOX_URL", url);
        all.put("E2B_API_KEY", key);
        all.put("E2B_SDK_PACKAGE", sdkPackage);
        String output = runNode(file, steps, all, timeoutSeconds, log);
        assertThat(output).as("the SDK that ran").contains("e2b SDK under test: " + sdkPackage + " " + version);
        return output;
    }

    /**
     * Runs one {@code node --test} file of {@link #E2E} (one test at a time) with {@code env} added
     * to this process's environment, and checks that every test passed, none was skipped, and each
     * numbered step in {@code steps} ran ({@code ✔ N. …} in the spec reporter's output).
     *
     * @param timeoutSeconds the whole file's limit; its processes are killed past it
     * @return the node output (also in {@code log})
     */
    static String runNode(String file, List<Integer> steps, Map<String, String> env, int timeoutSeconds, Path log)
            throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", "--test-concurrency=1", file))
                .directory(E2E.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("E2B_DEBUG");
        pb.environment().putAll(env);
        Process node = pb.start();
        boolean done = node.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!done) {
            node.descendants().forEach(ProcessHandle::destroyForcibly);
            node.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        assertThat(done).as(file + " timed out:\n" + output).isTrue();
        assertThat(node.exitValue()).as(output).isZero();
        // node's spec reporter summary: every test ran and passed, none skipped
        assertThat(output).contains("ℹ fail 0", "ℹ skipped 0", "ℹ cancelled 0", "ℹ todo 0").doesNotContain("ℹ pass 0");
        for (int step : steps) {
            assertThat(output).as(file + ": step " + step + " ran").containsPattern("✔ " + step + "\\. ");
        }
        return output;
    }
}
