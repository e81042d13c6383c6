package io.agentbox.manager;


import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code Template.build} end to end: the unmodified E2B JS SDK ({@code src/test/e2e/e2b-templates.test.mjs},
 * docs/e2b-wire.md#templates-lifecycle-and-snapshots items 1-9) against {@code agentbox standalone}. Builds run on the
 * standalone's worker in real crun sandboxes (fromTemplate('base'), offline); the built templates
 * are synced back to it and served. Once per SDK generation: 2.51.0 and 2.50.0. Fails (never
 * skips) when Node.js or the SDK is missing.
 */
class StandaloneTemplateBuildSdkTest extends StandaloneSdkTestBase {
    static final int STEPS = 9;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void templateBuildWorksWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        List<Integer> steps = new java.util.ArrayList<>();
        for (int step = 1; step <= STEPS; step++) {
            steps.add(step);
        }
        E2bAcceptance.run("e2b-templates.test.mjs", steps, apiUrl(),
                standalone.hub().newAdminKey().orElseThrow(), sdkPackage, version, Map.of("E2B_TEAM", "admin"), 600,
                dir.resolve("node-templates-" + sdkPackage + ".log"));
    }
}
