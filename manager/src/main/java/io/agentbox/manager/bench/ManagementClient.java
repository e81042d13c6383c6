package io.agentbox.manager.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The management API calls the benchmarks need (docs/management-api.md): idle sandboxes of a
 * template summed over connected clusters ({@code GET /internal/clusters/status}; workers report
 * every 2 s, so a refill is seen up to 2 s late), and creating and deleting a template. Without a
 * management URL the benchmark cannot wait for refills and pauses for a fixed time instead.
 */
final class ManagementClient {
    static final Duration POLL = Duration.ofMillis(200);

    private final String base;
    private final URI statusUrl;
    private final String managerToken;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    ManagementClient(URI managementUrl, String managerToken) {
        this.base = managementUrl.toString().replaceAll("/+$", "");
        this.statusUrl = URI.create(base + "/internal/clusters/status");
        this.managerToken = managerToken;
    }

    /** Idle sandboxes of {@code template} on connected clusters. */
    int idle(String template) {
        int idle = 0;
        for (JsonNode c : json(send(HttpRequest.newBuilder(statusUrl).GET(), 200, "cluster status")).path("clusters")) {
            if (!c.path("connected").asBoolean()) {
                continue;
            }
            for (JsonNode p : c.path("pools")) {
                if (template.equals(p.path("template").asText())) {
                    idle += p.path("idle").asInt();
                }
            }
        }
        return idle;
    }

    /**
     * The stored pool size of {@code template} ({@code GET /internal/templates/{name}}).
     *
     * @throws BenchException when the template is unknown or the API cannot be read
     */
    int poolSize(String template) {
        return json(send(HttpRequest.newBuilder(URI.create(base + "/internal/templates/" + template)).GET(), 200,
                "template '" + template + "'")).path("poolSize").asInt();
    }

    /** The stored network of {@code template} ({@code isolated} when the answer has none). */
    String network(String template) {
        String n = json(send(HttpRequest.newBuilder(URI.create(base + "/internal/templates/" + template)).GET(), 200,
                "template '" + template + "'")).path("network").asText("");
        return n.isEmpty() ? "isolated" : n;
    }

    /** {@code POST /internal/templates} with {@code body} (a JSON object) → 201. */
    void createTemplate(String body) {
        send(HttpRequest.newBuilder(URI.create(base + "/internal/templates")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)), 201, "create template");
    }

    /** {@code DELETE /internal/templates/{name}} → 204 (404 is fine: already gone). */
    void deleteTemplate(String name) {
        send(HttpRequest.newBuilder(URI.create(base + "/internal/templates/" + name)).DELETE(), 204, "delete template " + name);
    }

    /**
     * {@code PUT /internal/snapshots/{id}} {@code {"poolSize"}} → 200.
     *
     * @return the hub template serving the snapshot (its pools report under that name)
     */
    String snapshotPool(String snapshotId, int poolSize) {
        return json(send(HttpRequest.newBuilder(URI.create(base + "/internal/snapshots/"
                        + URLEncoder.encode(snapshotId, StandardCharsets.UTF_8)))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"poolSize\":" + poolSize + "}")), 200,
                "snapshot pool of " + snapshotId)).path("template").asText();
    }

    /** Sends with the manager token; anything but {@code want} (or 404 for a wanted 204) is a BenchException. */
    private byte[] send(HttpRequest.Builder b, int want, String what) {
        try {
            HttpResponse<byte[]> r = http.send(b.timeout(Duration.ofSeconds(30)).header("AGENTBOX-MANAGER-TOKEN", managerToken)
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != want && !(want == 204 && r.statusCode() == 404)) {
                throw new BenchException(what + ": HTTP " + r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8)
                        + (r.statusCode() == 401 ? " (wrong manager token?)" : "") + " (" + base + ")");
            }
            return r.body();
        } catch (IOException e) {
            throw new BenchException(what + ": " + (e.getMessage() != null ? e.getMessage() : e.toString()) + " (" + base + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }

    private static JsonNode json(byte[] body) {
        try {
            return Json.MAPPER.readTree(body);
        } catch (IOException e) {
            throw new BenchException("management API: unreadable answer: " + e.getMessage());
        }
    }

    /** Longest the cluster status can lag behind the pools: two capacity reports. */
    static final Duration REPORT_LAG = Duration.ofMillis(4_500);

    /**
     * Waits until the status shows fewer than {@code below} idle sandboxes of {@code template} (it
     * has seen claims made a moment ago), at most {@link #REPORT_LAG}.
     *
     * @return false when it did not within that time (the pool refilled between two reports)
     */
    boolean awaitBelow(String template, int below) {
        long deadline = System.nanoTime() + REPORT_LAG.toNanos();
        while (idle(template) >= below) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            BenchException.pause(POLL);
        }
        return true;
    }

    /**
     * Waits until {@code want} sandboxes of {@code template} are idle, printing progress every few seconds.
     *
     * @throws BenchException when the pools do not get there within {@code timeout}
     */
    void await(String template, int want, Duration timeout, PrintStream progress) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextPrint = System.nanoTime() + 3_000_000_000L;
        int have;
        while ((have = idle(template)) < want) {
            if (System.nanoTime() > deadline) {
                throw new BenchException("pool '" + template + "' has " + have + " idle sandboxes, not " + want
                        + ", after " + timeout.toSeconds() + " s (pool size too small, or the worker cannot start sandboxes?)");
            }
            if (System.nanoTime() > nextPrint) {
                progress.printf("bench: waiting for the warm pool to refill: %d/%d idle%n", have, want);
                nextPrint = System.nanoTime() + 3_000_000_000L;
            }
            BenchException.pause(POLL);
        }
    }
}
