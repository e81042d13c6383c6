package io.agentbox.mux.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.netty.MuxFrameHandler;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.agentbox.mux.netty.NettyWebSocketServer;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code wss://} with Netty on loopback, certificates from a CA made in the test: a verified
 * session, the three refusals a client must make (unknown CA, expired, wrong host name) with
 * messages that name the cause, and certificate rotation by replacing the PEM files.
 */
class ServerTlsTest {
    private static final Duration T = Duration.ofSeconds(10);
    @TempDir
    Path dir;
    private NettyWebSocketServer server;
    private ServerTls tls;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (tls != null) {
            tls.close();
        }
    }

    private int serve(Supplier<SslContext> context) throws Exception {
        server = NettyWebSocketServer.builder().bind("127.0.0.1", 0).tls(context)
                .route("/mux", rq -> new MuxFrameHandler(MuxRole.SERVER, MuxConfig.defaults(), null))
                .start();
        return server.address().getPort();
    }

    private int serve(TestCa.Issued cert) throws Exception {
        Path certFile = cert.write(dir.resolve("fullchain.pem"), dir.resolve("privkey.pem"));
        tls = ServerTls.watch(certFile, dir.resolve("privkey.pem"), Duration.ofMillis(100));
        return serve(tls::nettyContext);
    }

    private static CompletableFuture<MuxSession> dial(String url, SslContext client) {
        return NettyWebSocketClient.connect(URI.create(url), null, MuxRole.CLIENT, MuxConfig.defaults(), null, T, client);
    }

    /** The explanation of the failure of a dial that must fail. */
    private static String refusal(CompletableFuture<MuxSession> dial, String host) {
        Throwable[] error = new Throwable[1];
        assertThatThrownBy(() -> dial.get(20, TimeUnit.SECONDS)).satisfies(e -> error[0] = e);
        String why = TlsFailures.describe(error[0], host);
        assertThat(why).as("explained: %s", error[0]).isNotNull();
        return why;
    }

    @Test
    void aWorkerTrustingTheCaOpensASessionByNameAndByAddress() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        int port = serve(ca.issue("localhost", "127.0.0.1"));
        SslContext client = ClientTls.verifying(ca.writeCertificate(dir.resolve("ca.pem")));
        for (String host : new String[] {"localhost", "127.0.0.1"}) {
            MuxSession s = dial("wss://" + host + ":" + port + "/mux", client).get(20, TimeUnit.SECONDS);
            assertThat(s.ping().get(10, TimeUnit.SECONDS)).isPositive();
            s.close();
        }
    }

    @Test
    void aCertificateOfAnotherCaIsRefusedAsUntrusted() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        int port = serve(ca.issue("localhost"));
        SslContext other = ClientTls.verifying(TestCa.create("other-ca").writeCertificate(dir.resolve("other.pem")));
        assertThat(refusal(dial("wss://localhost:" + port + "/mux", other), "localhost"))
                .startsWith("TLS: the server's certificate is not signed by a trusted CA");
        // no --hub-ca: the system trust store does not know the test CA either
        assertThat(refusal(dial("wss://localhost:" + port + "/mux", null), "localhost"))
                .startsWith("TLS: the server's certificate is not signed by a trusted CA");
    }

    @Test
    void anExpiredCertificateIsRefusedAsExpired() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        Instant now = Instant.now();
        int port = serve(ca.issue(now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)), "localhost"));
        SslContext client = ClientTls.verifying(ca.writeCertificate(dir.resolve("ca.pem")));
        assertThat(refusal(dial("wss://localhost:" + port + "/mux", client), "localhost"))
                .startsWith("TLS: the server's certificate has expired");
    }

    @Test
    void aCertificateForAnotherHostIsRefusedNamingTheHost() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        int port = serve(ca.issue("hub.example.org"));
        SslContext client = ClientTls.verifying(ca.writeCertificate(dir.resolve("ca.pem")));
        assertThat(refusal(dial("wss://localhost:" + port + "/mux", client), "localhost"))
                .startsWith("TLS: the server's certificate does not name host localhost");
        assertThat(refusal(dial("wss://127.0.0.1:" + port + "/mux", client), "127.0.0.1"))
                .startsWith("TLS: the server's certificate does not name host 127.0.0.1");
    }

    @Test
    void aPlainServerDialedWithWssIsNamedAsNotSpeakingTls() throws Exception {
        int port = serve((Supplier<SslContext>) null);
        TestCa ca = TestCa.create("test-ca");
        SslContext client = ClientTls.verifying(ca.writeCertificate(dir.resolve("ca.pem")));
        assertThat(refusal(dial("wss://localhost:" + port + "/mux", client), "localhost"))
                .contains("does not speak TLS");
    }

    @Test
    void replacedFilesReachNewConnectionsOnlyOnceTheKeyMatchesTheCertificate() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        TestCa.Issued first = ca.issue("localhost");
        int port = serve(first);
        var jdkClient = ca.clientContext();
        SslContext client = ClientTls.verifying(ca.writeCertificate(dir.resolve("ca.pem")));
        MuxSession open = dial("wss://localhost:" + port + "/mux", client).get(20, TimeUnit.SECONDS);
        assertThat(TestCa.servedSerial(jdkClient, "localhost", port)).isEqualTo(first.serial());

        // a renewal writes the chain first: with the old key it is not a usable pair yet
        TestCa.Issued second = ca.issue("localhost");
        Path staged = dir.resolve("staged");
        Files.createDirectories(staged);
        second.write(staged.resolve("fullchain.pem"), staged.resolve("privkey.pem"));
        Files.copy(staged.resolve("fullchain.pem"), dir.resolve("fullchain.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Thread.sleep(1000); // ten polls
        assertThat(TestCa.servedSerial(jdkClient, "localhost", port)).isEqualTo(first.serial());

        Files.copy(staged.resolve("privkey.pem"), dir.resolve("privkey.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        await().atMost(Duration.ofSeconds(20)).until(() -> TestCa.servedSerial(jdkClient, "localhost", port).equals(second.serial()));
        assertThat(tls.keyPair().leaf().getSerialNumber()).isEqualTo(second.serial());
        // the session opened before the rotation carries on
        assertThat(open.ping().get(10, TimeUnit.SECONDS)).isPositive();
        MuxSession after = dial("wss://localhost:" + port + "/mux", client).get(20, TimeUnit.SECONDS);
        assertThat(after.ping().get(10, TimeUnit.SECONDS)).isPositive();
        after.close();
        open.close();
    }

    @Test
    void unusableFilesAreRefusedAtStartWithTheFileAndTheFixNamed() throws Exception {
        TestCa ca = TestCa.create("test-ca");
        TestCa.Issued a = ca.issue("localhost");
        Path cert = a.write(dir.resolve("a.pem"), dir.resolve("a.key"));
        Path sec1 = a.writeSec1Key(dir.resolve("a-sec1.key"));
        assertThatThrownBy(() -> ServerTls.watch(cert, sec1)).isInstanceOf(TlsFileException.class)
                .hasMessageContaining(sec1 + " holds a EC PRIVATE KEY").hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        ca.issue("localhost").write(dir.resolve("b.pem"), dir.resolve("b.key"));
        assertThatThrownBy(() -> ServerTls.watch(cert, dir.resolve("b.key"))).isInstanceOf(TlsFileException.class)
                .hasMessageContaining("does not belong to the certificate in " + cert);
        assertThatThrownBy(() -> ServerTls.watch(dir.resolve("a.key"), dir.resolve("a.key"))).isInstanceOf(TlsFileException.class)
                .hasMessageContaining(dir.resolve("a.key") + " holds no");
        assertThatThrownBy(() -> ServerTls.watch(cert, dir.resolve("missing.key"))).isInstanceOf(TlsFileException.class)
                .hasMessageContaining("cannot read " + dir.resolve("missing.key"));
    }
}
