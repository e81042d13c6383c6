package io.agentbox.manager;

import io.agentbox.worker.image.HostToolsImage;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code Template.build} end to end: the unmodified E2B JS SDK ({@code src/test/e2e/e2b-templates.test.mjs},
 * docs/e2b-wire.md#templates-lifecycle-and-snapshots items 1-9, and item 8's {@code fromDockerfile} as step 10) against
 * {@code agentbox standalone}. Builds run on the standalone's worker in real crun sandboxes
 * (fromTemplate('base'), offline); the built templates are synced back to it and served. The
 * Dockerfile's {@code FROM} is an image built offline from this host's programs
 * ({@link HostToolsImage}: bash and a few tools, no {@code user} in its passwd) and pushed to the
 * loopback registry, which the worker pulls it from. Once per SDK generation: 2.51.0 and 2.50.0.
 * Fails (never skips) when Node.js, the SDK or docker-registry is missing.
 */
class StandaloneTemplateBuildSdkTest extends StandaloneSdkTestBase {
    static final int STEPS = 10;
    /** What the Dockerfile's RUN and the checks in its sandbox use (the runtime brings busybox for COPY). */
    static final List<String> DOCKERFILE_TOOLS = List.of("bash", "sh", "cat", "echo", "ls", "pwd", "id", "env", "mkdir");
    static String dockerImage;

    @BeforeAll
    static void pushDockerfileBase() throws Exception {
        TestImages.Image tools = HostToolsImage.build("e2e/dockerfile-base:1", DOCKERFILE_TOOLS);
        new RegistryPush(registry).push("e2e/dockerfile-base", "1", tools.layers().stream().map(TestImages.Layer::blob).toList(),
                tools.config(), ManifestKind.OCI);
        dockerImage = registry.hostPort() + "/e2e/dockerfile-base:1";
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void templateBuildWorksWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        List<Integer> steps = new java.util.ArrayList<>();
        for (int step = 1; step <= STEPS; step++) {
            steps.add(step);
        }
        E2bAcceptance.run("e2b-templates.test.mjs", steps, apiUrl(),
                standalone.hub().newAdminKey().orElseThrow(), sdkPackage, version,
                Map.of("E2B_TEAM", "admin", "E2B_DOCKERFILE_BASE", dockerImage), 600,
                dir.resolve("node-templates-" + sdkPackage + ".log"));
    }
}
