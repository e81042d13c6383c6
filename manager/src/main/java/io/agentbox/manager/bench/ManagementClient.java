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
import java.util.HashMap;
import java.util.Map;

/**
 * The management API calls the benchmarks need (docs/management-api.md): idle sandboxes of a
 * template summed over connected clusters, and sandboxes still starting or being removed
 * ({@code GET /internal/clusters/status}; workers report every 2 s, so a refill is seen up to 2 s
 * late), and creating and deleting a template. Without a
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

    /**
     * What the connected clusters last reported: idle sandboxes of one template; per cluster the time
     * of its last report; and how many sandboxes are starting or being removed (a cluster's live
     * {@code sandboxes} beyond its pools' idle + running; 0 from workers that report no slots).
     */
    private record Status(int idle, Map<String, String> lastSeen, int inFlight) {}

    private Status status(String template) {
        int idle = 0;
        int inFlight = 0;
        Map<String, String> seen = new HashMap<>();
        for (JsonNode c : json(send(HttpRequest.newBuilder(statusUrl).GET(), 200, "cluster status")).path("clusters")) {
            if (!c.path("connected").asBoolean()) {
                continue;
            }
            seen.put(c.path("id").asText(), c.path("lastSeen").asText());
            int inPools = 0;
            for (JsonNode p : c.path("pools")) {
                inPools += p.path("idle").asInt() + p.path("running").asInt();
                if (template.equals(p.path("template").asText())) {
                    idle += p.path("idle").asInt();
                }
            }
            inFlight += Math.max(0, c.path("sandboxes").asInt() - inPools);
        }
        return new Status(idle, seen, inFlight);
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

    /**
     * Waits until {@code want} sandboxes of {@code template} are idle and the workers have nothing
     * else under way (no sandbox starting or being removed, such as a deleted template's pool being
     * drained), as every connected cluster reports in a report made after this call (they report
     * every 2 s), printing progress every few seconds. A round that starts from there measures only
     * itself.
     *
     * @throws BenchException when the pools do not get there within {@code timeout}
     */
    void await(String template, int want, Duration timeout, PrintStream progress) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextPrint = System.nanoTime() + 3_000_000_000L;
        Map<String, String> before = status(template).lastSeen();
        Status now;
        while ((now = status(template)).idle() < want || now.inFlight() > 0 || !fresh(before, now.lastSeen())) {
            if (System.nanoTime() > deadline) {
                throw new BenchException("pool '" + template + "' has " + now.idle() + " idle sandboxes, not " + want
                        + ", and " + now.inFlight() + " starting or being removed, after " + timeout.toSeconds()
                        + " s (pool size too small, or the worker cannot start sandboxes?)");
            }
            if (System.nanoTime() > nextPrint) {
                progress.printf("bench: waiting for the warm pool to refill: %d/%d idle, %d other sandboxes starting or "
                        + "being removed%n", now.idle(), want, now.inFlight());
                nextPrint = System.nanoTime() + 3_000_000_000L;
            }
            BenchException.pause(POLL);
        }
    }

    /** True when every cluster in {@code now} has reported since {@code before} was read. */
    private static boolean fresh(Map<String, String> before, Map<String, String> now) {
        for (var e : now.entrySet()) {
            if (e.getValue().equals(before.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
