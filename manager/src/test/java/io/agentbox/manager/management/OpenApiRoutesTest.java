package io.agentbox.manager.management;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.management.ManagementClient.Res;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/management-api.openapi.yaml against the real server: every documented path and method is
 * routed (a 404 from the router or a 405 fails; a resource's own 404 is an answer), and every
 * route the server has is documented.
 */
class OpenApiRoutesTest {
    static final Path SPEC = Path.of("..", "docs", "management-api.openapi.yaml");
    static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    static Set<String> documentedOperations() throws Exception {
        assertThat(SPEC).as("OpenAPI file (tests run in manager/)").exists();
        JsonNode doc = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(SPEC));
        assertThat(doc.get("openapi").asText()).startsWith("3.");
        Set<String> ops = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            p.getValue().fieldNames().forEachRemaining(m -> {
                if (METHODS.contains(m)) {
                    ops.add(m.toUpperCase(java.util.Locale.ROOT) + " " + p.getKey());
                }
            });
        }
        return ops;
    }

    @Test
    void documentedOperationsAndServerRoutesAreTheSame(@TempDir Path dir) throws Exception {
        Set<String> documented = documentedOperations();
        try (Hub hub = Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0), null)) {
            assertThat(new TreeSet<>(hub.management().routes())).isEqualTo(documented);

            ManagementClient api = new ManagementClient(hub.managementPort(), hub.newManagerToken().orElseThrow());
            for (String op : documented) {
                String method = op.substring(0, op.indexOf(' '));
                // placeholders name nothing that exists, so item routes answer their own 404 or 400
                String path = op.substring(op.indexOf(' ') + 1).replaceAll("\\{[a-zA-Z]+}", "doc-check");
                Res r = api.call(method, path, "POST".equals(method) || "PUT".equals(method) ? "{}" : null);
                assertThat(r.status()).as(op + " -> " + r.text()).isNotEqualTo(405);
                if (r.status() == 404) {
                    assertThat(r.json().get("message").asText()).as(op).doesNotStartWith("no route");
                }
            }
        }
    }
}
