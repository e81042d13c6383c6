package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.tools.MuxEchoServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code agentbox mux echo-server|bench}: argument validation and a tiny end-to-end bench. */
class MuxCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = new CommandLine(new AgentboxCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void muxWithoutSubcommandIsAUsageError() {
        assertThat(run("mux")).isEqualTo(2);
        assertThat(err.toString()).contains("missing command: echo-server or bench");
    }

    @Test
    void helpListsBothSubcommands() {
        assertThat(run("mux", "--help")).isZero();
        assertThat(out.toString()).contains("echo-server").contains("bench");
    }

    @Test
    void benchRequiresAUrl() {
        assertThat(run("mux", "bench")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--url=<url>'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://h:1/mux", "h:1/mux", "ws:///mux", "ws://bad host/mux"})
    void benchRejectsANonWebSocketUrl(String url) {
        assertThat(run("mux", "bench", "--url", url)).isEqualTo(2);
        assertThat(err.toString()).contains("--url");
    }

    @Test
    void benchRejectsBadNumbers() {
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--streams", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--streams must be 1..100000, got 0");
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--bytes", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--bytes must be at least 1");
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--bytes", "12q")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown size unit in '12q'");
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--window", "64k")).isEqualTo(2);
        assertThat(err.toString()).contains("--window must be between 256k and 2g bytes, got 65536");
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--rtt-samples", "-1")).isEqualTo(2);
        assertThat(err.toString()).contains("--rtt-samples and --warmup must not be negative");
        assertThat(run("mux", "bench", "--url", "ws://h:1/mux", "--streams", "many")).isEqualTo(2);
        assertThat(err.toString()).contains("'many' is not an int");
    }

    @Test
    void echoServerValidatesItsArguments() {
        assertThat(run("mux", "echo-server")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--port=<port>'");
        assertThat(run("mux", "echo-server", "--port", "70000")).isEqualTo(2);
        assertThat(err.toString()).contains("--port must be 0..65535, got 70000");
        assertThat(run("mux", "echo-server", "--port", "0", "--window", "1k")).isEqualTo(2);
        assertThat(err.toString()).contains("--window must be between 256k and 2g bytes");
    }

    @Test
    void echoServerOnAPortInUseFailsWithOneLine() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(run("mux", "echo-server", "--port", "" + busy.getLocalPort())).isEqualTo(1);
        }
        assertThat(err.toString().strip()).startsWith("agentbox: cannot listen on 127.0.0.1:").doesNotContain("\n");
    }

    @Test
    void benchAgainstAnUnreachableUrlPrintsOneLineAndFails() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        assertThat(run("mux", "bench", "--url", "ws://127.0.0.1:" + port + "/mux", "--timeout", "5")).isEqualTo(1);
        assertThat(err.toString().strip())
                .startsWith("agentbox: cannot connect to ws://127.0.0.1:" + port + "/mux: ")
                .doesNotContain("\n");
    }

    @Test
    void benchAgainstAnEchoServerPrintsTheTable() throws Exception {
        try (MuxEchoServer server = MuxEchoServer.start("127.0.0.1", 0, MuxConfig.defaults())) {
            int rc = run("mux", "bench", "--url", server.uri().toString(), "--streams", "3", "--bytes", "100k",
                    "--rtt-samples", "20", "--warmup", "2", "--window", "1m");
            assertThat(rc).as("stderr: %s", err).isZero();
            assertThat(server.bytesEchoed()).isEqualTo(3 * 100 * 1024 + 22);
        }
        assertThat(out.toString())
                .contains("3 stream(s) x 100 KiB echoed")
                .contains("open+1B echo over 20 samples")
                .contains("| run | streams | bytes/stream | MB/s | open+echo p50 | open+echo p99 |")
                .contains("| 3 | 100 KiB | ");
    }
}
