package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code --log-format json} and {@code AGENTBOX_LOG_FORMAT=json}: every line the JVM logs on
 * stderr is one JSON object (logback's JsonEncoder) with the level, logger, formatted message, MDC
 * and exception. Runs in child JVMs: reconfiguring logging here would change the other tests' logs.
 */
class LogFormatTest {

    @Test
    void theOptionBeforeOrAfterTheCommandNameLogsJsonLines() throws Exception {
        assertJsonLines(run(Map.of(), "--log-format", "json", "mux"));
        assertJsonLines(run(Map.of(), "image", "--log-format", "JSON"));
    }

    @Test
    void theEnvironmentVariableLogsJsonAndTheOptionWins() throws Exception {
        assertJsonLines(run(Map.of(LogFormat.ENV, "json"), "mux"));
        List<String> text = run(Map.of(LogFormat.ENV, "json"), "--log-format", "text", "mux");
        assertThat(text).anyMatch(l -> l.contains("INFO") && l.contains("hello json") && !l.startsWith("{"));
    }

    @Test
    void anUnknownFormatIsRefusedNamingTheChoices() throws Exception {
        List<String> lines = run(Map.of(), "--log-format", "xml", "mux");
        assertThat(String.join("\n", lines)).contains("log format must be 'text' or 'json', not 'xml'");
    }

    private static void assertJsonLines(List<String> lines) throws Exception {
        assertThat(lines).as("stderr").hasSizeGreaterThanOrEqualTo(2);
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            assertThat(line).as("every line is one JSON object").startsWith("{").endsWith("}");
            events.add(Json.MAPPER.readTree(line));
        }
        JsonNode info = events.stream().filter(e -> "hello json".equals(e.path("formattedMessage").asText()))
                .findFirst().orElseThrow(() -> new AssertionError("no event 'hello json' in " + lines));
        assertThat(info.path("level").asText()).isEqualTo("INFO");
        assertThat(info.path("loggerName").asText()).isEqualTo("io.agentbox.probe");
        assertThat(info.path("mdc").path("sandbox").asText()).isEqualTo("sb-1");
        assertThat(info.path("timestamp").asLong()).isPositive();
        JsonNode warn = events.stream().filter(e -> "it failed".equals(e.path("formattedMessage").asText()))
                .findFirst().orElseThrow();
        assertThat(warn.path("throwable").path("message").asText()).isEqualTo("boom\nsecond line with \"quotes\"");
    }

    /** Runs {@link JsonLogProbe} with {@code args} and extra environment; its stderr lines (non-blank). */
    private static List<String> run(Map<String, String> env, String... args) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
                "-cp", System.getProperty("java.class.path"), JsonLogProbe.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().remove(LogFormat.ENV);
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] err = p.getErrorStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(err, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
    }
}
