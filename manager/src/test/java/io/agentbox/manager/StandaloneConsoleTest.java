package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The browser console end to end: {@code src/test/e2e/console.test.mjs} drives Debian's headless
 * Chromium with puppeteer-core against {@code agentbox standalone} (real crun sandboxes, a real
 * template build, a real snapshot): sign-in, every page with live content, a kill from the UI, a
 * command typed into the PTY terminal, live updates. It writes one 1280x800 PNG per page to
 * {@code target/console-screenshots} (docs/console/ holds a committed set). Where the hub lacks a
 * page's {@code /v1} route the browser step asserts the page's "not available on this hub" note
 * instead, and the test prints those routes. Fails, never skips, when Chromium or puppeteer-core is
 * missing ({@code deploy/bin/test-all} installs both).
 *
 * <p>{@code base} runs with network {@code none} here: Chromium on Linux aborts its requests with
 * {@code ERR_NETWORK_CHANGED} whenever a network interface appears on the host, and every
 * {@code isolated} sandbox adds one (its veth), so a refilling pool would fail page loads at random.
 */
class StandaloneConsoleTest {
    static final int STEPS = 9;
    static final List<String> SCREENSHOTS = List.of("sign-in", "clusters", "sandboxes", "sandbox-terminal", "templates",
            "build-logs", "snapshots", "keys");
    static final Path SHOTS = Path.of("target/console-screenshots").toAbsolutePath();
    @TempDir
    static Path dir;
    static Standalone standalone;

    @BeforeAll
    static void startStandalone() throws Exception {
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0).withBase(new BaseTemplate("none", 0));
        standalone = Standalone.start(config, Duration.ofSeconds(60),
                line -> System.out.println("standalone: " + line));
    }

    @AfterAll
    static void stopStandalone() {
        if (standalone != null) {
            standalone.close();
        }
    }

    @Test
    void theConsoleWorksInARealBrowser() throws Exception {
        Path chromium = Path.of(System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium"));
        assertThat(chromium).as("Debian's chromium is not installed (apt-get install chromium; deploy/bin/test-all does)")
                .isExecutable();
        assertThat(E2bAcceptance.E2E.resolve("node_modules/puppeteer-core/package.json"))
                .as("puppeteer-core is not installed; run deploy/bin/test-all (or npm ci in " + E2bAcceptance.E2E + ")").exists();
        Files.createDirectories(SHOTS);
        for (String name : SCREENSHOTS) {
            Files.deleteIfExists(SHOTS.resolve(name + ".png"));
        }
        String url = "http://127.0.0.1:" + standalone.hub().apiPort();
        String output = E2bAcceptance.runNode("console.test.mjs", IntStream.rangeClosed(1, STEPS).boxed().toList(), Map.of(
                "E2B_API_URL", url, "E2B_SANDBOX_URL", url, "E2B_API_KEY", standalone.hub().newAdminKey().orElseThrow(),
                "CONSOLE_CLUSTER", Standalone.CLUSTER_ID, "CHROMIUM", chromium.toString(), "SCREENSHOT_DIR", SHOTS.toString()),
                600, dir.resolve("node-console.log"));
        // a route the hub lacks yet is checked as the page's "not available" note (console.test.mjs prints which)
        List<String> unavailable = output.lines().filter(l -> l.startsWith("NOT AVAILABLE: ")).distinct().toList();
        System.out.println("console: routes checked in their not-available state: " + unavailable);
        if (unavailable.stream().noneMatch(l -> l.endsWith("/pty"))) {
            assertThat(output).containsPattern("terminal output: console-\\d+");
        }
        for (String name : SCREENSHOTS) {
            assertThat(pngSize(SHOTS.resolve(name + ".png"))).as(name + ".png").containsExactly(1280, 800);
        }
    }

    /** Width and height from a PNG's IHDR chunk. */
    static int[] pngSize(Path png) throws Exception {
        try (InputStream in = Files.newInputStream(png); DataInputStream data = new DataInputStream(in)) {
            byte[] signature = data.readNBytes(8);
            assertThat(signature).as(png + " is a PNG").startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
            data.readInt(); // IHDR length
            assertThat(new String(data.readNBytes(4), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("IHDR");
            return new int[] {data.readInt(), data.readInt()};
        }
    }
}
