package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code agentbox reset} finds the hub and key where the E2B SDK does ({@code E2B_API_URL},
 * {@code E2B_API_KEY}) when neither {@code --url} nor {@code AGENTBOX_URL} is given, against a
 * loopback HTTP server standing in for the hub's reset route (the route itself is tested with real
 * sandboxes in StandaloneE2bSnapshotsTest).
 */
class ResetCommandTest {
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path home;
    private HttpServer hub;
    private final List<String> seen = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        hub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        hub.createContext("/", ex -> {
            seen.add(ex.getRequestMethod() + " " + ex.getRequestURI() + " key=" + ex.getRequestHeaders().getFirst("Authorization").substring("Bearer ".length()));
            byte[] body = "{\"sandboxID\":\"x\"}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        hub.start();
    }

    @AfterEach
    void stop() {
        hub.stop(0);
    }

    private int run(Map<String, String> env, StringWriter out, StringWriter err, String... args) {
        Map<String, String> withHome = new java.util.HashMap<>(env);
        withHome.put("HOME", home.toString()); // no config file
        CommandLine cli = AgentboxCommand.commandLine(withHome::get, false);
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        String[] all = new String[args.length + 1];
        all[0] = "reset";
        System.arraycopy(args, 0, all, 1, args.length);
        return cli.execute(all);
    }

    @Test
    void takesTheSdksVariablesWhenNothingElseIsSet() {
        String url = "http://127.0.0.1:" + hub.getAddress().getPort();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = run(Map.of("E2B_API_URL", url + "/", "E2B_API_KEY", "e2b_sdk"), out, err, "sbx1");
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).startsWith("sbx1 reset in ");
        assertThat(seen).containsExactly("POST /v1/sandboxes/sbx1/reset key=e2b_sdk");

        // AGENTBOX_URL and the options still come first
        seen.clear();
        code = run(Map.of("AGENTBOX_URL", url, "E2B_API_URL", "http://127.0.0.1:1", "E2B_API_KEY", "e2b_sdk"),
                new StringWriter(), err, "--api-key", "e2b_flag", "sbx2");
        assertThat(code).as(err.toString()).isZero();
        assertThat(seen).containsExactly("POST /v1/sandboxes/sbx2/reset key=e2b_flag");

        StringWriter none = new StringWriter();
        assertThat(run(Map.of(), new StringWriter(), none, "sbx3")).isEqualTo(1);
        assertThat(none.toString()).contains("error: no hub URL: pass --url, set AGENTBOX_URL (or E2B_API_URL)");
    }

    @Test
    void aHubThatIsDownIsNamedWithTheCause() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        StringWriter err = new StringWriter();
        int code = run(Map.of(), new StringWriter(), err, "--url", "http://127.0.0.1:" + port, "--api-key", "k", "sbx1", "sbx2");
        assertThat(code).isEqualTo(1);
        assertThat(err.toString()).contains("sbx1: cannot reach the hub at http://127.0.0.1:" + port + ": ")
                .contains("sbx2: cannot reach").doesNotContain("null");
    }
}
