package io.agentbox.manager.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox reset SANDBOX_ID...}: returns sandboxes to their template's or snapshot's file
 * system with fresh processes, keeping id, access token and address ({@code POST
 * /v1/sandboxes/{id}/reset} on the hub's public API; docs/snapshots-and-reset.md). Prints one line
 * per sandbox: its id and how long the reset took. Exit status 1 when any reset failed (the
 * hub's message is printed).
 */
@Command(name = "reset", mixinStandardHelpOptions = true,
        description = "Reset sandboxes (RL episodes): fresh files and processes, same id, access token and address.")
final class ResetCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "SANDBOX_ID", description = "Sandboxes to reset, one after another.")
    List<String> sandboxIds;

    @Option(names = "--url",
            description = "The hub's public API, e.g. http://127.0.0.1:3000 (default: $AGENTBOX_URL, else $E2B_API_URL,"
                    + " what the E2B SDK uses).")
    String url;

    @Option(names = "--api-key", description = "An API key of the sandboxes' team (default: $E2B_API_KEY, as the SDK).")
    String apiKey;

    /** Where the defaults come from (the process environment; tests give their own). */
    Function<String, String> env = System::getenv;

    @Override
    public Integer call() throws Exception {
        String url = firstSet(this.url, env.apply("AGENTBOX_URL"), env.apply("E2B_API_URL"));
        String apiKey = firstSet(this.apiKey, env.apply("E2B_API_KEY"));
        if (url == null) {
            throw new ParameterException(spec.commandLine(), "no hub URL: pass --url or set AGENTBOX_URL or E2B_API_URL");
        }
        if (apiKey == null) {
            throw new ParameterException(spec.commandLine(), "no API key: pass --api-key or set E2B_API_KEY");
        }
        String base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        int failed = 0;
        for (String id : sandboxIds) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/sandboxes/"
                            + URLEncoder.encode(id, StandardCharsets.UTF_8) + "/reset"))
                    .timeout(Duration.ofSeconds(90)).header("X-API-Key", apiKey).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
            long started = System.nanoTime();
            HttpResponse<String> r;
            try {
                r = http.send(request, HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                // the JDK client's exceptions often carry no message (a refused connection is a bare ClosedChannelException)
                err.println(id + ": cannot reach the hub at " + base + ": " + (e.getMessage() == null
                        ? e.getClass().getSimpleName() : e.getMessage()) + (e.getCause() == null ? "" : " (" + e.getCause() + ")"));
                failed++;
                continue;
            }
            long ms = (System.nanoTime() - started) / 1_000_000;
            if (r.statusCode() == 200) {
                out.println(id + " reset in " + ms + " ms");
            } else {
                failed++;
                err.println(id + ": " + r.statusCode() + " " + message(r.body()));
            }
        }
        out.flush();
        err.flush();
        return failed == 0 ? 0 : 1;
    }

    private static String firstSet(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v.trim();
            }
        }
        return null;
    }

    private static String message(String body) {
        try {
            JsonNode n = Json.MAPPER.readTree(body);
            // the native API's envelope {"error":{"message"}}; E2B's {"message"} elsewhere
            JsonNode error = n.path("error");
            return error.isObject() ? error.path("message").asText(body) : n.path("message").asText(body);
        } catch (IOException | RuntimeException e) {
            return body;
        }
    }
}
