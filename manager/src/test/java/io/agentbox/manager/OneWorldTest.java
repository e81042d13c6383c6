package io.agentbox.manager;

import io.agentbox.manager.testing.JsonHttp;
import io.agentbox.manager.testing.JsonHttp.Res;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker is the source of truth and there is one world of sandboxes: a sandbox created through
 * a worker's own API is listed, reachable (envd) and killable through the hub and the other way
 * round; after a hub restart the worker's report ends the records of sandboxes it no longer runs,
 * and a hub whose store lacks sandboxes (a fresh store, same admin key) adopts them.
 */
class OneWorldTest {
    private static final Duration T = Duration.ofSeconds(60);
    private static final String CLUSTER_TOKEN = "one-world-cluster-token";

    private final JsonHttp client = new JsonHttp();

    private Res call(String method, int port, String path, Map<String, String> headers, String body) throws Exception {
        return client.call(method, port, path, headers, body);
    }

    private static Hub startHub(Path dir, int tunnelPort, String adminKey) throws Exception {
        return Hub.start(HubConfig.defaults(dir).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0).withPresetAdminKey(adminKey).withBase(new BaseTemplate(null, 2)),
                new SharedTokenAuthenticator(CLUSTER_TOKEN));
    }

    private String create(int port, Map<String, String> auth) throws Exception {
        Res r = await().atMost(T).until(() -> call("POST", port, "/sandboxes", auth, "{\"templateID\":\"base\"}"),
                x -> x.status() != 503);
        assertThat(r.status()).as("create: %s", r.json()).isEqualTo(201);
        return r.json().get("sandboxID").asText();
    }

    private List<String> listed(int port, Map<String, String> auth) throws Exception {
        Res r = call("GET", port, "/sandboxes", auth, null);
        assertThat(r.status()).as("list: %s", r.json()).isEqualTo(200);
        List<String> ids = new ArrayList<>();
        r.json().forEach(s -> ids.add(s.get("sandboxID").asText()));
        return ids;
    }

    private static Optional<SandboxRecord> stored(Hub hub, String id) {
        return hub.store().sandboxStore().get(id);
    }

    @Test
    void sandboxesAreOneWorldAndTheWorkerIsTheSourceOfTruth(@TempDir Path dir) throws Exception {
        int tunnelPort = JsonHttp.freePort();
        String admin = ApiKeys.newKey();
        Map<String, String> auth = Map.of("X-API-Key", admin);
        Hub hub = startHub(dir.resolve("hub"), tunnelPort, admin);
        WorkerAgent worker = null;
        WorkerApi local = null;
        try {
            URI tunnel = URI.create("ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH);
            worker = WorkerAgent.start(tunnel, "w1", CLUSTER_TOKEN, WorkerDirs.sandboxDataDir(dir.resolve("w1")));
            WorkerAgent w = worker;
            await().atMost(T).until(() -> w.apiKeys().get(ApiKeys.hash(admin)) != null);
            local = WorkerApi.start(worker, "127.0.0.1", 0);
            int hubPort = hub.apiPort();
            int localPort = local.port();

            // one world: each API sees, reaches and kills the other's sandboxes
            String viaHub = create(hubPort, auth);
            String viaWorker = create(localPort, auth);
            assertThat(listed(hubPort, auth)).contains(viaHub, viaWorker);
            assertThat(listed(localPort, auth)).contains(viaHub, viaWorker);
            Res detail = call("GET", hubPort, "/sandboxes/" + viaWorker, auth, null);
            assertThat(detail.status()).as("hub get of a worker-API sandbox: %s", detail.json()).isEqualTo(200);
            assertThat(call("GET", hubPort, "/health", Map.of("E2b-Sandbox-Id", viaWorker), null).status())
                    .as("envd through the hub").isEqualTo(204);
            assertThat(call("GET", localPort, "/sandboxes/" + viaHub, auth, null).status()).isEqualTo(200);
            assertThat(call("GET", localPort, "/health", Map.of("E2b-Sandbox-Id", viaHub), null).status()).isEqualTo(204);
            assertThat(call("DELETE", hubPort, "/sandboxes/" + viaWorker, auth, null).status()).isEqualTo(204);
            assertThat(call("GET", localPort, "/sandboxes/" + viaWorker, auth, null).status()).isEqualTo(404);
            assertThat(call("DELETE", localPort, "/sandboxes/" + viaHub, auth, null).status()).isEqualTo(204);
            assertThat(call("GET", hubPort, "/sandboxes/" + viaHub, auth, null).status()).isEqualTo(404);

            // hub restart: a record whose sandbox ended on the worker meanwhile is ended on reconnect
            String gone = create(hubPort, auth);
            String kept = create(hubPort, auth);
            Hub first = hub;
            await().atMost(T).until(() -> stored(first, gone).isPresent() && stored(first, kept).isPresent());
            hub.close();
            hub = null;
            assertThat(call("DELETE", localPort, "/sandboxes/" + gone, auth, null).status()).isEqualTo(204);
            hub = startHub(dir.resolve("hub"), tunnelPort, admin);
            Hub second = hub;
            assertThat(stored(second, gone).orElseThrow().ended()).as("still believed running").isFalse();
            await().atMost(T).untilAsserted(() -> {
                SandboxRecord r = stored(second, gone).orElseThrow();
                assertThat(r.ended()).as("ended by the worker's report").isTrue();
                assertThat(r.endReason()).isEqualTo("gone");
            });
            assertThat(stored(second, kept).orElseThrow().ended()).isFalse();

            // a hub whose store lacks the sandbox (fresh store, same key) adopts it on reconnect
            hub.close();
            hub = null;
            hub = startHub(dir.resolve("fresh-hub"), tunnelPort, admin);
            Hub third = hub;
            await().atMost(T).untilAsserted(() -> {
                SandboxRecord r = stored(third, kept).orElseThrow(() -> new AssertionError("not adopted yet"));
                assertThat(r.team()).isEqualTo("admin");
                assertThat(r.ended()).isFalse();
            });
            assertThat(listed(third.apiPort(), auth)).contains(kept);
            assertThat(call("DELETE", third.apiPort(), "/sandboxes/" + kept, auth, null).status()).isEqualTo(204);
            assertThat(listed(localPort, auth)).doesNotContain(kept);
        } finally {
            if (local != null) {
                local.close();
            }
            if (worker != null) {
                worker.close();
            }
            if (hub != null) {
                hub.close();
            }
        }
    }
}
