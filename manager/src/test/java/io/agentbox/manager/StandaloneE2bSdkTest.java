package io.agentbox.manager;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The unmodified E2B JS SDK (pinned in {@code src/test/e2e/package.json}) against {@code agentbox
 * standalone} on the {@code base} template: every request crosses hub → loopback WebSocket → mux →
 * gRPC → worker → crun container. Runs {@code node --test src/test/e2e/e2b-sdk.test.mjs} once per
 * SDK generation: 2.51.0 (v2 create/connect paths) and 2.50.0 (v1 paths, like the Python SDK)
 * ({@link E2bAcceptance}). {@code StandaloneImageE2bSdkTest} runs it on an image template.
 */
class StandaloneE2bSdkTest extends StandaloneSdkTestBase {
    static final Path E2E = E2bAcceptance.E2E;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void unmodifiedJsSdkPassesAgainstStandalone(String sdkPackage, String version) throws Exception {
        String key = standalone.hub().newAdminKey().orElseThrow();
        String url = apiUrl();
        E2bAcceptance.run(url, key, sdkPackage, version, "base", dir.resolve("node-" + sdkPackage + ".log"));
    }
}
