package io.agentbox.manager;


import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Pause, resume, the create-time lifecycle and metrics with the unmodified E2B JS SDK against
 * {@code agentbox standalone} on real crun sandboxes: {@code src/test/e2e/e2b-pause.test.mjs}
 * (items 10–17 and 23 of docs/e2b-wire.md#templates-lifecycle-and-snapshots), once with SDK 2.51.0 and once with
 * 2.50.0 (v1 connect path, pause body {@code {"memory":true}}). Fails (never skips) when Node.js
 * or the SDKs are missing: {@code deploy/bin/test-all} installs them.
 */
class StandalonePauseSdkTest extends StandaloneSdkTestBase {
    /** Numbered items of the acceptance outline the file covers. */
    static final List<Integer> ITEMS = List.of(10, 11, 12, 13, 14, 15, 16, 17, 23);

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"e2b, 2.51.0", "e2b-2-50, 2.50.0"})
    void pauseResumeLifecycleAndMetricsWorkWithTheUnmodifiedSdk(String sdkPackage, String version) throws Exception {
        E2bAcceptance.run("e2b-pause.test.mjs", ITEMS, apiUrl(),
                standalone.hub().newAdminKey().orElseThrow(), sdkPackage, version, Map.of(), 300,
                dir.resolve("node-pause-" + sdkPackage + ".log"));
    }
}
