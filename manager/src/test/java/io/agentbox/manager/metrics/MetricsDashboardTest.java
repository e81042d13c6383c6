package io.agentbox.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.agentbox.manager.Standalone;
import io.agentbox.manager.bench.E2bClient;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.management.ManagementServer;
import io.agentbox.manager.workerapi.WorkerMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every metric {@code deploy/grafana/agentbox-dashboard.json} queries exists. A real standalone
 * system (hub + local worker with crun sandboxes, over its loopback tunnel) serves a claim, a
 * command and a kill, a command killed at its template's memory limit, and a create refused by a
 * team limit; then the hub's {@code /metrics} (management port, manager token) and the worker's
 * {@code /metrics} (its own listener) are scraped, and every metric name in every {@code expr} of
 * the dashboard must be among the samples (a {@code _bucket} one of a histogram).
 */
class MetricsDashboardTest {
    static final Path DASHBOARD = Path.of("..", "deploy", "grafana", "agentbox-dashboard.json");
    static final Path SCRAPE_CONFIG = Path.of("..", "deploy", "prometheus", "prometheus.yml");
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void everyMetricTheDashboardQueriesIsScraped(@TempDir Path dir) throws Exception {
        JsonNode dashboard = Json.MAPPER.readTree(Files.readString(DASHBOARD));
        Set<String> wanted = PromQlNames.ofDashboard(dashboard);
        assertThat(wanted).as("the dashboard's queries").hasSizeGreaterThan(15);

        try (Standalone s = Standalone.start(dir.resolve("data"), "127.0.0.1", 0, Duration.ofSeconds(60), line -> { })) {
            s.workerMetrics().serve("127.0.0.1", 0);
            String key = s.hub().newAdminKey().orElseThrow();
            String token = s.hub().newManagerToken().orElseThrow();
            String mgmt = "http://127.0.0.1:" + s.hub().managementPort();
            URI api = URI.create("http://127.0.0.1:" + s.hub().apiPort());

            // a template whose sandboxes have 64 MiB: a command past that is killed by the kernel
            assertThat(call("POST", mgmt + "/internal/templates", token,
                    "{\"name\":\"tiny\",\"poolSize\":1,\"memoryMb\":64,\"network\":\"none\"}").statusCode()).isEqualTo(201);
            await().atMost(Duration.ofSeconds(60)).until(() -> s.worker().host().capacity().stream()
                    .anyMatch(p -> p.getTemplate().equals("tiny") && p.getIdle() == 1));

            try (E2bClient e2b = new E2bClient(api, api, key)) {
                E2bClient.Sandbox sandbox = e2b.create("base");
                assertThat(e2b.run(sandbox, "echo hi")).isZero();
                e2b.kill(sandbox.id());

                E2bClient.Sandbox tiny = e2b.create("tiny");
                // the OOM killer ends tail (exit 137) or the shell itself (a signal: exit code -1)
                assertThat(e2b.run(tiny, "head -c 400000000 /dev/zero | tail")).as("killed at the memory limit").isIn(137, -1);
                e2b.kill(tiny.id()); // the worker reads the cgroup's OOM count before the kill
            }

            // a create refused by a team limit (agentbox_sandboxes_limited_total)
            JsonNode created = Json.MAPPER.readTree(call("POST", mgmt + "/internal/api-keys", token,
                    "{\"team\":\"metrics-limited\",\"role\":\"user\",\"name\":\"m\"}").body());
            assertThat(call("PUT", mgmt + "/internal/teams/metrics-limited/limits", token,
                    "{\"maxSandboxes\":0,\"createsPerSecond\":null}").statusCode()).isEqualTo(200);
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(api.resolve("/sandboxes"))
                    .header("X-API-Key", created.path("key").asText()).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);

            assertThat(call("GET", mgmt + "/metrics", null, null).statusCode()).as("the hub's needs the token").isEqualTo(401);
            // a round trip was measured (the value may print as 8.4E-4: compare numbers, not text)
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(value(scrape(mgmt + "/metrics", token), "agentbox_tunnel_rtt_seconds", "cluster=\"local\""))
                            .isGreaterThan(0).isLessThan(1));
            Scrape hub = scrape(mgmt + "/metrics", token);
            Scrape worker = scrape("http://127.0.0.1:" + s.workerMetrics().port() + "/metrics", null);

            Set<String> missing = new TreeSet<>();
            for (String name : wanted) {
                if (!hub.has(name) && !worker.has(name)) {
                    missing.add(name);
                }
            }
            assertThat(missing).as("metrics the dashboard queries that neither /metrics has").isEmpty();

            // the series carry what happened, under bounded labels
            assertThat(value(worker, "agentbox_exec_total", "template=\"base\"")).isGreaterThanOrEqualTo(1);
            assertThat(value(worker, "agentbox_sandbox_oom_kills_total", "template=\"tiny\"")).isGreaterThanOrEqualTo(1);
            assertThat(value(worker, "agentbox_claim_seconds_count", "result=\"ok\",template=\"base\"")).isEqualTo(1);
            assertThat(value(hub, "agentbox_hub_claim_seconds_count", "cluster=\"local\"")).isEqualTo(2);
            assertThat(value(hub, "agentbox_http_server_requests_seconds_count",
                    "method=\"POST\",route=\"/sandboxes\",status=\"201\"")).isEqualTo(2);
            assertThat(value(hub, "agentbox_http_server_requests_seconds_count",
                    "method=\"POST\",route=\"/process.Process/Start\",status=\"200\"")).isEqualTo(2);
            assertThat(value(hub, "agentbox_http_server_requests_seconds_count",
                    "method=\"DELETE\",route=\"/sandboxes/{id}\",status=\"204\"")).isEqualTo(2);
            assertThat(value(hub, "agentbox_tunnel_bytes_total", "cluster=\"local\",direction=\"in\"")).isPositive();
            assertThat(hub.text()).as("no sandbox id becomes a label").doesNotContain("route=\"/sandboxes/local-");
            // two registries, two endpoints: the worker's series are not the hub's, and the other way round
            assertThat(hub.samples()).noneMatch(n -> n.startsWith("agentbox_pool_") || n.startsWith("agentbox_exec"));
            assertThat(worker.samples()).noneMatch(n -> n.startsWith("agentbox_tunnel_") || n.startsWith("jvm_"));
            assertThat(worker.text()).contains("cluster=\"local\"");
        }
    }

    /** The scrape configuration scrapes what the test scrapes: the hub with the manager token, the workers without. */
    @Test
    void theScrapeConfigNamesBothEndpoints() throws Exception {
        JsonNode config = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(SCRAPE_CONFIG));
        Map<String, JsonNode> jobs = new HashMap<>();
        config.path("scrape_configs").forEach(j -> jobs.put(j.path("job_name").asText(), j));
        JsonNode hub = jobs.get("agentbox-hub");
        assertThat(hub.path("metrics_path").asText()).isEqualTo("/metrics");
        assertThat(hub.path("authorization").path("type").asText()).isEqualTo("Bearer");
        assertThat(hub.path("authorization").path("credentials_file").asText()).isEqualTo("manager-token");
        assertThat(hub.path("static_configs").get(0).path("targets").get(0).asText())
                .endsWith(":" + ManagementServer.DEFAULT_PORT);
        JsonNode workers = jobs.get("agentbox-workers");
        assertThat(workers.path("metrics_path").asText()).isEqualTo(WorkerMetrics.PATH);
        assertThat(workers.has("authorization")).isFalse();
        assertThat(workers.path("static_configs").get(0).path("targets").get(0).asText())
                .endsWith(":" + WorkerMetrics.DEFAULT_PORT);
    }

    private HttpResponse<String> call(String method, String url, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private Scrape scrape(String url, String token) throws Exception {
        HttpResponse<String> r = call("GET", url, token, null);
        assertThat(r.statusCode()).as(url + ": " + r.body()).isEqualTo(200);
        return Scrape.parse(r.body());
    }

    /** The value of sample {@code name} whose labels contain {@code labels} (in the exposition's sorted order). */
    private static double value(Scrape s, String name, String labels) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{(.*)} (\\S+)$").matcher(s.text());
        while (m.find()) {
            if (m.group(1).contains(labels)) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no sample " + name + "{" + labels + "} in\n" + s.text().lines()
                .filter(l -> l.startsWith(name)).reduce("", (a, b) -> a + b + "\n"));
    }
}
