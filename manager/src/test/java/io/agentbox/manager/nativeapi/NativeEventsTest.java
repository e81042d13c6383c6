package io.agentbox.manager.nativeapi;

import static io.agentbox.manager.nativeapi.NativeSandboxesTest.assertEnvelope;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.http.RequestIds;
import io.agentbox.manager.nativeapi.V1Client.Res;
import io.agentbox.manager.testing.HubWithClusters;
import io.agentbox.manager.workerapi.WorkerApi;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/events} on a real hub with a worker cluster joined over its tunnel and real
 * sandboxes: order, tenancy, the subscriber limit, a client that stops reading; and the request id
 * in the log lines of a command stream's relay.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeEventsTest {
    static final Duration T = Duration.ofSeconds(60);
    HubWithClusters hub;
    V1Client v1;
    String admin;
    String alice;
    String bob;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        hub = HubWithClusters.start(dir);
        hub.join("edge-1");
        v1 = new V1Client("http://127.0.0.1:" + hub.hub().apiPort());
        admin = hub.key().get("X-API-Key");
        alice = hub.hub().store().createApiKey("alice", "user");
        bob = hub.hub().store().createApiKey("bob", "user");
        hub.createOnceReady("base"); // the pool is up
    }

    @AfterAll
    void stop() {
        hub.close();
    }

    SseClient events(String key, String query) throws Exception {
        SseClient s = SseClient.open(v1.http(), v1.base, "/v1/events" + query, key);
        assertThat(s.response.statusCode()).isEqualTo(200);
        assertThat(s.response.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        return s;
    }

    String create(String key) throws Exception {
        Res r = v1.call("POST", "/v1/sandboxes", key, "{}");
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.json().get("id").asText();
    }

    static boolean sandboxEvent(JsonNode e, String op, String id) {
        return e.get("event").asText().equals("sandbox") && e.get("data").get("op").asText().equals(op)
                && e.get("data").get("sandbox").get("id").asText().equals(id);
    }

    static boolean about(JsonNode e, String id) {
        return e.get("event").asText().equals("sandbox") && e.get("data").get("sandbox").get("id").asText().equals(id);
    }

    @Test
    void aTeamSeesItsSandboxesComeAndGoInOrderAnotherTeamSeesNoneAnAdminSeesAll() throws Exception {
        try (SseClient a = events(alice, ""); SseClient b = events(bob, ""); SseClient adm = events(admin, "");
             SseClient admAlice = events(admin, "?team=alice")) {
            String id = create(alice);
            assertThat(v1.call("DELETE", "/v1/sandboxes/" + id, alice, null).status()).isEqualTo(204);

            JsonNode created = a.next(e -> about(e, id), T);
            assertThat(created).as("alice's created event").isNotNull();
            assertThat(created.get("data").get("op").asText()).isEqualTo("created");
            JsonNode sbx = created.get("data").get("sandbox");
            assertThat(sbx.get("team").asText()).isEqualTo("alice");
            assertThat(sbx.get("template").asText()).isEqualTo("base");
            assertThat(sbx.get("cluster").asText()).isEqualTo("edge-1");
            assertThat(sbx.get("state").asText()).isEqualTo("running");
            assertThat(sbx.has("envdAccessToken")).isFalse();
            JsonNode deleted = a.next(e -> about(e, id), T);
            assertThat(deleted).as("alice's deleted event after the created one").isNotNull();
            assertThat(deleted.get("data").get("op").asText()).isEqualTo("deleted");

            assertThat(adm.next(e -> sandboxEvent(e, "created", id), T)).isNotNull();
            assertThat(adm.next(e -> sandboxEvent(e, "deleted", id), T)).isNotNull();
            assertThat(admAlice.next(e -> sandboxEvent(e, "deleted", id), T)).isNotNull();

            // bob's own sandbox comes after alice's events on every stream: once bob sees it, he would have seen hers
            String mine = create(bob);
            List<JsonNode> seen = new ArrayList<>();
            assertThat(b.next(e -> {
                seen.add(e);
                return sandboxEvent(e, "created", mine);
            }, T)).isNotNull();
            assertThat(seen).noneMatch(e -> about(e, id)).noneMatch(e -> e.get("event").asText().equals("cluster"));
            assertThat(adm.next(e -> sandboxEvent(e, "created", mine), T)).as("the admin sees bob's too").isNotNull();
            assertThat(admAlice.next(e -> about(e, mine), Duration.ofSeconds(2))).as("?team=alice leaves bob's out").isNull();
            assertThat(v1.call("DELETE", "/v1/sandboxes/" + mine, bob, null).status()).isEqualTo(204);

            JsonNode cluster = adm.next(e -> e.get("event").asText().equals("cluster"), T);
            assertThat(cluster).as("an admin hears of the clusters").isNotNull();
            assertThat(cluster.get("data").get("cluster").get("id").asText()).isEqualTo("edge-1");
            assertThat(cluster.get("data").get("cluster").get("pools").get(0).get("label").asText()).isEqualTo("base");
        }
    }

    @Test
    void badRequestsAndLimitsAnswerTheEnvelope() throws Exception {
        assertEnvelope(v1.call("GET", "/v1/events", null, null), 401, "unauthorized");
        assertEnvelope(v1.call("GET", "/v1/events?team=alice", bob, null), 403, "forbidden");
        assertEnvelope(v1.call("POST", "/v1/events", bob, "{}"), 405, "method_not_allowed");

        String carol = hub.hub().store().createApiKey("carol", "user");
        List<SseClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < EventBus.DEFAULT_MAX_PER_TEAM; i++) {
                open.add(events(carol, ""));
            }
            Res over = v1.call("GET", "/v1/events", carol, null);
            assertEnvelope(over, 429, "too_many_requests");
            assertThat(over.json().get("error").get("message").asText()).contains("team 'carol'");
            try (SseClient other = events(bob, "")) {
                assertThat(other.response.statusCode()).as("another team still subscribes").isEqualTo(200);
            }
        } finally {
            for (SseClient s : open) {
                s.close();
            }
        }
    }

    @Test
    void aClientThatStopsReadingIsDroppedWithoutSlowingTheHub() throws Exception {
        // big events (32 KiB of metadata each): the hub's socket buffers (up to 4 MiB) hold few of them
        StringBuilder meta = new StringBuilder("{\"metadata\":{");
        for (int i = 0; i < 32; i++) {
            meta.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"").append("x".repeat(1000)).append('"');
        }
        Res made = v1.call("POST", "/v1/sandboxes", alice, meta.append("}}").toString());
        assertThat(made.status()).as(made.text()).isEqualTo(201);
        String id = made.json().get("id").asText();
        try (Socket slow = new Socket()) {
            slow.setReceiveBufferSize(4096);
            slow.connect(new java.net.InetSocketAddress("127.0.0.1", hub.hub().apiPort()));
            OutputStream out = slow.getOutputStream();
            out.write(("GET /v1/events?team=alice HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + admin
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            slow.setSoTimeout(30_000);
            StringBuilder head = new StringBuilder();
            while (head.indexOf("\r\n\r\n") < 0) { // subscribed once the headers came
                head.append((char) slow.getInputStream().read());
            }
            assertThat(head.toString()).startsWith("HTTP/1.1 200");
            try (SseClient reader = events(alice, "")) {
                // every timeout change is an event; far more of them than the slow client's queue and buffers hold
                int changes = EventBus.DEFAULT_QUEUE_CAPACITY + 600;
                ExecutorService pool = Executors.newFixedThreadPool(4);
                long start = System.nanoTime();
                List<Future<Long>> calls = new ArrayList<>();
                for (int i = 0; i < changes; i++) {
                    int seconds = 600 + i;
                    calls.add(pool.submit(() -> {
                        long t0 = System.nanoTime();
                        Res r = v1.call("POST", "/v1/sandboxes/" + id + "/timeout", alice, "{\"timeoutSeconds\":" + seconds + "}");
                        assertThat(r.status()).as(r.text()).isEqualTo(204);
                        return System.nanoTime() - t0;
                    }));
                }
                long slowest = 0;
                for (Future<Long> f : calls) {
                    slowest = Math.max(slowest, f.get());
                }
                pool.shutdown();
                assertThat(Duration.ofNanos(slowest)).as("the slowest timeout change").isLessThan(Duration.ofSeconds(5));
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(90));
                // the reading client got them all (its queue drains as fast as they come)
                for (int i = 0; i < changes; i++) {
                    assertThat(reader.next(e -> sandboxEvent(e, "updated", id), T)).as("update %d", i).isNotNull();
                }
            }
            // the slow one was dropped: its stream ends with an error event, or (not read in time) is cut
            InputStream in = slow.getInputStream();
            byte[] buf = new byte[1 << 16];
            StringBuilder got = new StringBuilder();
            boolean cut = false;
            try {
                int n;
                while (got.indexOf("event: error") < 0 && (n = in.read(buf)) > 0) {
                    got.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                }
                cut = got.indexOf("event: error") < 0;
            } catch (java.net.SocketException reset) {
                cut = true;
            }
            assertThat(got.toString()).contains("event: sandbox");
            if (!cut) {
                assertThat(got.substring(got.indexOf("event: error"))).contains("\"code\":\"unavailable\"")
                        .contains("too slowly");
            }
        } finally {
            v1.call("DELETE", "/v1/sandboxes/" + id, alice, null);
        }
    }

    @Test
    void aWorkersLocalApiAnswers501() throws Exception {
        await().atMost(HubWithClusters.T).until(() -> hub.worker("edge-1").apiKeys().get(ApiKeys.hash(alice)) != null);
        try (WorkerApi local = WorkerApi.start(hub.worker("edge-1"), "127.0.0.1", 0)) {
            V1Client w = new V1Client("http://127.0.0.1:" + local.port());
            assertEnvelope(w.call("GET", "/v1/events", alice, null), 501, "not_implemented");
        }
    }

    @Test
    void aStreamedCommandsRelayLogsWithTheRequestId() throws Exception {
        String id = create(alice);
        Logger log = (Logger) LoggerFactory.getLogger(CommandStream.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Level level = log.getLevel();
        log.setLevel(Level.DEBUG);
        log.addAppender(logs);
        try {
            Res r = v1.call("POST", "/v1/sandboxes/" + id + "/commands", alice, "{\"cmd\":\"sleep 0.2; echo done\"}",
                    Map.of("Accept", "text/event-stream", RequestIds.HEADER, "events-test-relay-1"));
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.text()).contains("event: end");
            await().atMost(T).until(() -> logs.list.stream().anyMatch(e -> e.getFormattedMessage().contains("ended with exit code 0")));
            ILoggingEvent relay = logs.list.stream().filter(e -> e.getFormattedMessage().contains("ended with exit code 0"))
                    .findFirst().orElseThrow();
            assertThat(relay.getThreadName()).as("logged on a gRPC callback thread, not the request's").doesNotContain("agentbox-api");
            assertThat(relay.getMDCPropertyMap()).containsEntry(RequestIds.MDC_KEY, "events-test-relay-1");
        } finally {
            log.detachAppender(logs);
            log.setLevel(level);
            v1.call("DELETE", "/v1/sandboxes/" + id, alice, null);
        }
    }
}
