package io.agentbox.manager.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PodmanTest {
    private static final String LIMITS = """
            Limit                     Soft Limit           Hard Limit           Units
            Max processes             96363                96363                processes
            Max open files            1024                 20000                files
            Max locked memory         unlimited            unlimited            bytes
            """;

    @Test
    void hardLimitsComeFromTheHardColumn() {
        assertThat(Podman.hardLimit(LIMITS, "Max open files", 1_048_576)).isEqualTo(20_000);
        assertThat(Podman.hardLimit(LIMITS, "Max processes", 1_048_576)).isEqualTo(96_363);
        assertThat(Podman.hardLimit(LIMITS, "Max locked memory", 77)).isEqualTo(77);
        assertThat(Podman.hardLimit(LIMITS, "Max file locks", 5)).isEqualTo(5);
    }

    @Test
    void theLoadedImageIsReadFromPodmansAnswer() {
        assertThat(Podman.loadedImage("Loaded image: localhost/bench/busybox:1\n")).isEqualTo("localhost/bench/busybox:1");
        assertThat(Podman.loadedImage("WARN[0000] something\nLoaded image(s): localhost/a:1\n")).isEqualTo("localhost/a:1");
        assertThat(Podman.loadedImage("Error: nothing loaded\n")).isNull();
    }

    @Test
    void theRowShowsBothSidesAndPodmanOverOurs() {
        BenchReport report = new BenchReport();
        PodmanRounds.compare(report, "exec", "podman 4.3.1 / hub",
                new Latencies.Summary(3, 150_000_000L, 300_000_000L, 0, 0),
                new Latencies.Summary(4, 10_000_000L, 60_000_000L, 0, 0));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        report.print(new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("| exec | podman 4.3.1 / hub | podman p50/p90 150 / 300 ms, "
                + "agentbox 10.0 / 60.0 ms: podman / agentbox = 15.0 x at p50, 5.0 x at p90 (3 samples each) |");
    }
}
