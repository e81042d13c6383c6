package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A worker started before its hub keeps redialing (with backoff) and syncs once the hub is up. */
class WorkerRedialTest {
    private static final String TOKEN = "redial-test-token-0123456789";

    @Test
    void workerStartedBeforeTheHubConnectsWhenTheHubComesUp(@TempDir Path dir) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        URI tunnel = URI.create("ws://127.0.0.1:" + port + TunnelProtocol.PATH);
        Path workerDir = WorkerDirs.sandboxDataDir(dir.resolve("worker"));
        try (WorkerAgent worker = WorkerAgent.start(tunnel, "late-hub", TOKEN, workerDir)) {
            // nothing listens yet: the first dials are refused
            assertThat(worker.firstTemplates()).isNotDone();
            Thread.sleep(700);
            assertThat(worker.firstTemplates()).isNotDone();
            try (Hub hub = Hub.start(dir.resolve("hub"), "127.0.0.1", 0, "127.0.0.1", port,
                    new SharedTokenAuthenticator(TOKEN))) {
                // backoff is capped at 15 s; the hub's template snapshot must reach the worker
                worker.firstTemplates().get(30, TimeUnit.SECONDS);
                assertThat(hub.tunnels().registry().isConnected("late-hub")).isTrue();
            }
        }
    }
}
