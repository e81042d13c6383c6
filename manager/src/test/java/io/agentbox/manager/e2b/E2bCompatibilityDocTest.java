package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.testing.ApiUnderTest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps docs/e2b-compatibility.md true: every row of its control-plane route table and its
 * create-field table is called over HTTP against a hub with a real (bubblewrap) worker and must
 * answer the status the row states; every "proved by" test named in the data-plane and port
 * tables must exist in the SDK end-to-end test. Changing a route's behaviour without the doc
 * (or the reverse) fails here.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class E2bCompatibilityDocTest {
    static final Path DOC = Path.of("../docs/e2b-compatibility.md");
    static final Path E2E = Path.of("src/test/e2e/e2b-sdk.test.mjs");
    /** {@code | `METHOD /path` | SDK call | status | notes |} */
    static final Pattern ROUTE_ROW = Pattern.compile("^\\| `(GET|POST|PUT|PATCH|DELETE) (/[^`]*)` \\|[^|]*\\| (\\d{3}) \\|");
    /** {@code | `{json}` | status | why |} */
    static final Pattern FIELD_ROW = Pattern.compile("^\\| `(\\{.*\\})` \\| (\\d{3}) \\|");
    /** Last column of the data-plane and port tables. */
    static final Pattern PROVED_BY = Pattern.compile("^\\|.*\\| ([^|`]+) \\|$");

    ApiUnderTest api;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    record Row(String method, String path, int status) {}

    @Test
    void everyControlPlaneRouteAnswersAsDocumented() throws Exception {
        List<Row> rows = new ArrayList<>();
        for (String line : Files.readAllLines(DOC)) {
            Matcher m = ROUTE_ROW.matcher(line);
            if (m.find()) {
                rows.add(new Row(m.group(1), m.group(2), Integer.parseInt(m.group(3))));
            }
        }
        assertThat(rows).as("route rows parsed from " + DOC).hasSizeGreaterThan(20);
        assertThat(rows.get(rows.size() - 1).method()).as("DELETE goes last: it ends the sandbox").isEqualTo("DELETE");
        String id = create("{}").get("sandboxID").asText();
        for (Row row : rows) {
            String body = row.path().endsWith("/timeout") ? "{\"timeout\":60}" : "{}";
            HttpResponse<String> r = call(row.method(), row.path().replace("{id}", id), body);
            assertThat(r.statusCode()).as(row + " answered " + r.body()).isEqualTo(row.status());
            if (row.status() == 201 && row.path().endsWith("sandboxes")) {
                call("DELETE", "/sandboxes/" + Json.MAPPER.readTree(r.body()).get("sandboxID").asText(), null);
            }
            if (row.status() >= 400) {
                JsonNode err = Json.MAPPER.readTree(r.body());
                assertThat(err.get("code").asInt()).isEqualTo(row.status());
                assertThat(err.get("message").asText()).as("a remedy for " + row).isNotBlank();
            }
        }
        // the 501s were counted by route family
        assertThat(api.server.meters().find(E2bControlHandler.UNSUPPORTED_METRIC).tag("route", "logs").counter())
                .isNotNull().satisfies(c -> assertThat(c.count()).isEqualTo(2.0));
        HttpResponse<String> metrics = call("GET", E2bControlHandler.METRICS_PATH, null);
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).containsPattern("agentbox_e2b_unsupported_total\\{route=\"templates\",team=\"[a-z0-9._-]+\"} 3.0");
    }

    @Test
    void everyCreateFieldAnswersAsDocumented() throws Exception {
        int rows = 0;
        for (String line : Files.readAllLines(DOC)) {
            Matcher m = FIELD_ROW.matcher(line);
            if (!m.find()) {
                continue;
            }
            rows++;
            HttpResponse<String> r = call("POST", "/v2/sandboxes", m.group(1));
            assertThat(r.statusCode()).as(m.group(1) + " answered " + r.body()).isEqualTo(Integer.parseInt(m.group(2)));
            JsonNode json = Json.MAPPER.readTree(r.body());
            if (r.statusCode() == 201) {
                call("DELETE", "/sandboxes/" + json.get("sandboxID").asText(), null);
            } else {
                assertThat(json.get("message").asText()).as("a remedy").isNotBlank();
            }
        }
        assertThat(rows).as("create-field rows parsed from " + DOC).isGreaterThan(8);
    }

    @Test
    void everyProvedByTestExists() throws Exception {
        String e2e = Files.readString(E2E);
        int named = 0;
        boolean dataPlane = false;
        for (String line : Files.readAllLines(DOC)) {
            dataPlane |= line.startsWith("## Data plane");
            Matcher m = PROVED_BY.matcher(line);
            if (!dataPlane || !m.find() || line.startsWith("|---") || line.startsWith("| route") || line.startsWith("| routing")) {
                continue;
            }
            String test = m.group(1).trim();
            named++;
            assertThat(e2e).as("e2e test named in the doc: " + test).contains("test('" + test);
        }
        assertThat(named).isGreaterThan(10);
    }

    private JsonNode create(String body) throws Exception {
        HttpResponse<String> r = call("POST", "/v2/sandboxes", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return Json.MAPPER.readTree(r.body());
    }

    private HttpResponse<String> call(String method, String path, String body) throws Exception {
        return api.call(method, path, api.adminKey, body);
    }
}
