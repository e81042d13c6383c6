package io.agentbox.manager;

import io.agentbox.manager.testing.JsonHttp;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the unmodified E2B JS SDK reports when the hub shuts down or a worker dies mid-command, and
 * while a worker is away ({@code src/test/e2e/disconnect.mjs}): errors that say what happened and
 * name the cluster, never "likely due to sandbox timeout", and answers within seconds. The worker
 * is a separate JVM ({@code agentbox worker}) so that it can be killed with SIGKILL.
 */
class DisconnectE2bSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CLUSTER_TOKEN = "disconnect-cluster-token";
    private static final String TIMEOUT_HINT = "likely due to sandbox timeout";

    private static Hub startHub(Path dir, int apiPort, int tunnelPort, String adminKey) throws Exception {
        return Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", apiPort).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0).withPresetAdminKey(adminKey).withBase(new BaseTemplate(null, 1)),
                new SharedTokenAuthenticator(CLUSTER_TOKEN));
    }

    @Test
    void sdkErrorsSayWhatHappened(@TempDir Path dir) throws Exception {
        Path e2e = StandaloneE2bSdkTest.E2E;
        assertThat(e2e.resolve("node_modules/e2b/package.json")).as("run npm ci in " + e2e).exists();
        int apiPort = JsonHttp.freePort();
        int tunnelPort = JsonHttp.freePort();
        String admin = ApiKeys.newKey();
        Hub hub = startHub(dir.resolve("hub"), apiPort, tunnelPort, admin);
        Process worker = null;
        Process node = null;
        Map<String, JsonNode> steps = new TreeMap<>();
        StringBuilder transcript = new StringBuilder();
        try {
            Path tokenFile = Files.writeString(dir.resolve("w1.token"), CLUSTER_TOKEN);
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            worker = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    "io.agentbox.manager.cli.AgentboxCommand", "worker", "--hub",
                    "ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH, "--cluster-id", "w1",
                    "--token-file", tokenFile.toString(), "--data-dir", dir.resolve("w1").toString(), "--api-port", "0")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("w1.log").toFile()).start();

            Hub first = hub;
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                io.agentbox.wsproxy.ClusterTunnel t = first.tunnels().registry().get("w1");
                return t != null && t.idle("base") > 0;
            });
            String url = "http://127.0.0.1:" + apiPort;
            ProcessBuilder pb = new ProcessBuilder(List.of("node", "disconnect.mjs")).directory(e2e.toFile())
                    .redirectError(dir.resolve("node.err").toFile());
            pb.environment().remove("E2B_DEBUG");
            pb.environment().put("E2B_API_URL", url);
            pb.environment().put("E2B_SANDBOX_URL", url);
            pb.environment().put("E2B_API_KEY", admin);
            node = pb.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
            Writer answer = new OutputStreamWriter(node.getOutputStream(), StandardCharsets.UTF_8);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            String line;
            while (System.nanoTime() < deadline && (line = in.readLine()) != null) {
                transcript.append(line).append('\n');
                JsonNode msg = JSON.readTree(line);
                if (msg.has("do")) {
                    switch (msg.get("do").asText()) {
                        case "close-hub" -> hub.close();
                        case "start-hub" -> {
                            hub = startHub(dir.resolve("hub"), apiPort, tunnelPort, admin);
                            Hub h = hub;
                            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60))
                                    .until(() -> h.tunnels().registry().isConnected("w1"));
                        }
                        case "kill-worker" -> {
                            worker.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                            Hub h = hub;
                            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
                                    .until(() -> !h.tunnels().registry().isConnected("w1"));
                        }
                        default -> throw new AssertionError("unknown request " + line);
                    }
                    answer.write("ok\n");
                    answer.flush();
                } else {
                    steps.put(msg.get("step").asText(), msg);
                    if (msg.get("step").asText().equals("done")) {
                        break;
                    }
                }
            }
            String log = transcript + "\nstderr:\n" + Files.readString(dir.resolve("node.err"));
            System.out.println(log);
            assertThat(steps).as(log).containsKey("done");

            JsonNode hubDown = steps.get("hub-shutdown-mid-command");
            assertThat(hubDown.get("ok").asBoolean()).as(log).isFalse();
            assertThat(hubDown.get("message").asText()).as(log).contains("hub is shutting down").doesNotContain(TIMEOUT_HINT);

            JsonNode workerDied = steps.get("worker-died-mid-command");
            assertThat(workerDied.get("ok").asBoolean()).as(log).isFalse();
            assertThat(workerDied.get("message").asText()).as(log)
                    .contains("worker cluster 'w1' disconnected").doesNotContain(TIMEOUT_HINT);

            String id = steps.get("created").get("sandboxId").asText();
            assertThat(steps.get("list").toString()).as(log).contains(id, "unreachable");
            assertThat(steps.get("get-info").get("value").asText()).as(log).isEqualTo("unreachable");
            for (String step : List.of("command-while-disconnected", "read-while-disconnected", "kill-while-disconnected")) {
                JsonNode s = steps.get(step);
                assertThat(s.get("ok").asBoolean()).as(step + "\n" + log).isFalse();
                assertThat(s.get("message").asText()).as(step + "\n" + log)
                        .contains("'w1'", "disconnected").doesNotContain(TIMEOUT_HINT);
                assertThat(s.get("ms").asLong()).as(step + " answered quickly\n" + log).isLessThan(5_000);
            }
        } finally {
            if (node != null) {
                node.destroyForcibly();
            }
            if (worker != null) {
                worker.descendants().forEach(ProcessHandle::destroyForcibly);
                worker.destroyForcibly();
            }
            hub.close();
        }
    }
}
