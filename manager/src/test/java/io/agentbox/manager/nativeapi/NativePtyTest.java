package io.agentbox.manager.nativeapi;

import static io.agentbox.manager.nativeapi.NativeSandboxesTest.assertEnvelope;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.testing.ApiUnderTest;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The terminal WebSocket of the native API: a real WebSocket on loopback to a shell in a real sandbox. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public class NativePtyTest {
    ApiUnderTest api;
    V1Client v1;
    WebSocketClient ws;
    String key;
    String id;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        v1 = new V1Client(api.base);
        key = api.store.createApiKey("erin", "user");
        id = v1.call("POST", "/v1/sandboxes", key, "{}").json().get("id").asText();
        ws = new WebSocketClient();
        ws.start();
    }

    @AfterAll
    void stop() throws Exception {
        ws.stop();
        api.close();
    }

    /** Collects the terminal's output and the close. */
    public static final class Terminal implements Session.Listener.AutoDemanding {
        final StringBuffer output = new StringBuffer();
        final CompletableFuture<String> closed = new CompletableFuture<>();
        volatile Session session;

        @Override
        public void onWebSocketOpen(Session session) {
            this.session = session;
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            output.append(StandardCharsets.UTF_8.decode(payload));
            callback.succeed();
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason) {
            closed.complete(statusCode + " " + reason);
        }

        void send(String text) {
            session.sendText(text, Callback.NOOP);
        }

        boolean waitFor(String text, long seconds) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < until) {
                if (output.toString().contains(text)) {
                    return true;
                }
                Thread.sleep(50);
            }
            return false;
        }
    }

    @Test
    void aShellRunsOnATerminalOverTheWebSocket() throws Exception {
        Terminal t = new Terminal();
        ClientUpgradeRequest up = new ClientUpgradeRequest();
        up.setHeader("Authorization", "Bearer " + key);
        Session s = ws.connect(t, URI.create(api.base.replace("http", "ws") + "/v1/sandboxes/" + id + "/pty?cols=100&rows=30"),
                up).get(20, TimeUnit.SECONDS);
        assertThat(s.getUpgradeResponse().getHeader("X-Request-Id")).isNotBlank();
        t.send("echo hi-$((40+2))\n");
        assertThat(t.waitFor("hi-42", 20)).as("output so far: " + t.output).isTrue();
        t.send("{\"type\":\"resize\",\"cols\":123,\"rows\":45}");
        t.send("stty size\n");
        assertThat(t.waitFor("45 123", 20)).as("output so far: " + t.output).isTrue();
        t.send("exit 7\n");
        assertThat(t.closed.get(20, TimeUnit.SECONDS)).isEqualTo("1000 exit 7");
    }

    @Test
    void theKeyMayComeInTheQueryAndErrorsComeBeforeTheUpgrade() throws Exception {
        Terminal t = new Terminal();
        ws.connect(t, URI.create(api.base.replace("http", "ws") + "/v1/sandboxes/" + id + "/pty?apiKey=" + key))
                .get(20, TimeUnit.SECONDS);
        t.send("echo via-query\n");
        assertThat(t.waitFor("via-query", 20)).as("output so far: " + t.output).isTrue();
        t.session.close();

        assertEnvelope(v1.call("GET", "/v1/sandboxes/" + id + "/pty", key, null), 400, "bad_request");
        assertEnvelope(v1.call("GET", "/v1/sandboxes/nope/pty", key, null), 404, "not_found");
        assertEnvelope(v1.call("GET", "/v1/sandboxes/" + id + "/pty?apiKey=" + key, null, null), 401, "unauthorized");
        assertEnvelope(v1.call("GET", "/v1/sandboxes/" + id + "/pty?cols=0", key, null), 400, "bad_request");
    }
}
