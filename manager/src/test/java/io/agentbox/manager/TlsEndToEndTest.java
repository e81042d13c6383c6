package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.tls.ClientTls;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.mux.tls.TestCa;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.tunnel.TunnelClient;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * TLS end to end with a CA made in the test: a hub serving https and wss from PEM files, a worker
 * started as {@code agentbox worker --hub wss://localhost:P/v1/tunnel --hub-ca ca.pem --tls-cert
 * --tls-key} in its own JVM; sandboxes are created through the hub's https API and through the
 * worker's own https API; replacing the hub's PEM files changes what new connections of both
 * listeners see; a worker trusting another CA is refused with a log line that says so.
 */
class TlsEndToEndTest {
    private static final Duration T = Duration.ofSeconds(90);
    private static final String TOKEN = "tls-test-cluster-token-0123456789";

    @Test
    void aWorkerOnWssAndSandboxesOnHttpsWithRotationAndAWrongCaRefused(@TempDir Path dir) throws Exception {
        TestCa ca = TestCa.create("agentbox-test-ca");
        Path caFile = ca.writeCertificate(dir.resolve("ca.pem"));
        Path cert = dir.resolve("fullchain.pem");
        Path key = dir.resolve("privkey.pem");
        ca.issue("localhost", "127.0.0.1").write(cert, key);
        ServerTls tls = ServerTls.watch(cert, key, Duration.ofMillis(200));
        Hub hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0), new SharedTokenAuthenticator(TOKEN), tls);
        Process worker = null;
        Path workerLog = dir.resolve("worker.log");
        try {
            String admin = hub.newAdminKey().orElseThrow();
            HttpClient plain = HttpClient.newHttpClient();
            HttpResponse<String> sized = plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.managementPort()
                    + "/internal/templates/base")).header("Authorization", "Bearer " + hub.newManagerToken().orElseThrow())
                    .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString("{\"poolSize\":1}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(sized.statusCode()).isEqualTo(200);

            Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN);
            Path workerCert = dir.resolve("worker-cert.pem");
            Path workerKey = dir.resolve("worker-key.pem");
            ca.issue("localhost", "127.0.0.1").write(workerCert, workerKey);
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            worker = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    "io.agentbox.manager.cli.AgentboxCommand", "worker",
                    "--hub", "wss://localhost:" + hub.tunnelPort() + TunnelProtocol.PATH, "--hub-ca", caFile.toString(),
                    "--cluster-id", "w1", "--token-file", tokenFile.toString(), "--data-dir", dir.resolve("w1").toString(),
                    "--api-host", "127.0.0.1", "--api-port", "0", "--tls-cert", workerCert.toString(), "--tls-key", workerKey.toString())
                    .redirectErrorStream(true).redirectOutput(workerLog.toFile()).start();
            await().atMost(T).until(() -> hub.tunnels().registry().isConnected("w1"));

            HttpClient https = HttpClient.newBuilder().sslContext(ca.clientContext()).build();
            String apiUrl = "https://localhost:" + hub.apiPort();
            await().atMost(T).untilAsserted(() -> assertThat(create(https, apiUrl, admin).statusCode()).isEqualTo(201));
            HttpResponse<String> made = create(https, apiUrl, admin);
            String id = made.body().replaceAll(".*\"sandboxID\"\\s*:\\s*\"([^\"]+)\".*", "$1");
            assertThat(https.send(HttpRequest.newBuilder(URI.create(apiUrl + "/sandboxes/" + id)).header("X-API-Key", admin)
                    .DELETE().build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(204);

            // the worker's own public API, https with its own certificate
            Pattern served = Pattern.compile("public API for clients in this cluster on https://127\\.0\\.0\\.1:(\\d+)");
            int[] workerPort = new int[1];
            await().atMost(T).until(() -> {
                Matcher m = served.matcher(Files.readString(workerLog));
                return m.find() && (workerPort[0] = Integer.parseInt(m.group(1))) > 0;
            });
            String workerUrl = "https://localhost:" + workerPort[0];
            await().atMost(T).untilAsserted(() -> assertThat(create(https, workerUrl, admin).statusCode()).isEqualTo(201));

            // rotation: new PEM files reach new connections of the API and of the tunnel endpoint
            SSLContext jdk = ca.clientContext();
            TestCa.Issued renewed = ca.issue("localhost", "127.0.0.1");
            Path staged = Files.createDirectories(dir.resolve("renewed"));
            renewed.write(staged.resolve("fullchain.pem"), staged.resolve("privkey.pem"));
            Files.move(staged.resolve("privkey.pem"), key, StandardCopyOption.REPLACE_EXISTING);
            Files.move(staged.resolve("fullchain.pem"), cert, StandardCopyOption.REPLACE_EXISTING);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(TestCa.servedSerial(jdk, "localhost", hub.apiPort())).isEqualTo(renewed.serial());
                assertThat(TestCa.servedSerial(jdk, "localhost", hub.tunnelPort())).isEqualTo(renewed.serial());
            });
            assertThat(create(https, apiUrl, admin).statusCode()).as("a new https connection after rotation").isEqualTo(201);
            assertThat(hub.tunnels().registry().isConnected("w1")).as("the open tunnel carries on").isTrue();

            // a worker that trusts another CA is refused, and its log says why
            ListAppender<ILoggingEvent> logs = new ListAppender<>();
            logs.start();
            Logger tunnelLog = (Logger) LoggerFactory.getLogger(TunnelClient.class);
            tunnelLog.addAppender(logs);
            Path otherCa = TestCa.create("other-ca").writeCertificate(dir.resolve("other-ca.pem"));
            try (TunnelClient wrong = new TunnelClient(URI.create("wss://localhost:" + hub.tunnelPort() + TunnelProtocol.PATH),
                    "w2", TOKEN, MuxConfig.defaults(), null, s -> { }, ClientTls.verifying(otherCa))) {
                wrong.start();
                await().atMost(T).until(() -> logs.list.stream().anyMatch(e -> e.getFormattedMessage()
                        .contains("TLS: the server's certificate is not signed by a trusted CA")
                        && e.getFormattedMessage().contains("check --hub-ca")));
                assertThat(hub.tunnels().registry().isConnected("w2")).isFalse();
            } finally {
                tunnelLog.detachAppender(logs);
            }
        } finally {
            if (worker != null) {
                worker.destroy();
                worker.waitFor();
            }
            hub.close();
        }
    }

    private static HttpResponse<String> create(HttpClient https, String base, String key) throws Exception {
        return https.send(HttpRequest.newBuilder(URI.create(base + "/sandboxes")).header("X-API-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\"}")).build(), HttpResponse.BodyHandlers.ofString());
    }
}
