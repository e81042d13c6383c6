package io.agentbox.manager.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 2xx from the management API is a promise: {@value #CYCLES} times, a separate hub JVM takes a
 * stream of writes (API keys, revocations, teams, templates, cluster registrations and config) and
 * is killed with SIGKILL at a random moment; restarted on the same data directory and store, it
 * must still have every write it acknowledged: keys authenticate on the public API (revoked ones
 * do not), templates, teams, clusters and configs are there with the acknowledged resource
 * version and content, and resource versions never go backwards. The one request in flight at
 * the kill may or may not have happened. Runs on the embedded default store and on PostgreSQL.
 *
 * <p>Seeded: the seed is printed; {@code -Dcrash.seed=N} replays a run.
 */
class StoreCrashTest {
    static final int CYCLES = 20;
    /** The kill comes this long after the write phase starts, uniformly (ms). */
    static final int MAX_WRITE_PHASE_MS = 400;
    private static final String TOKEN_HEADER = "AGENTBOX-MANAGER-TOKEN";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    Path dir;

    /** The embedded default (a PostgreSQL the hub runs itself): each restart also stops the server the killed hub left. */
    @Test
    void embeddedDefaultStoreKeepsEveryAcknowledgedWrite() throws Exception {
        run(null);
    }

    @Test
    void postgresKeepsEveryAcknowledgedWrite() throws Exception {
        // the server outlives the hub processes: only the hub is killed
        run(EmbeddedPostgresServer.freshDatabase());
    }

    /** What the hub acknowledged, by item; {@code rv} is the acknowledged resource version. */
    record Key(String id, String plaintext, boolean revoked, long rv) {}

    record Item(String kind, String name, String content, long rv) {}

    private final Map<String, Key> keys = new LinkedHashMap<>();
    private final Map<String, Item> items = new LinkedHashMap<>();
    private final List<String> deletedTemplates = new ArrayList<>();
    private long maxAcked;
    private int counter;

    private void run(StoreConfig store) throws Exception {
        long seed = Long.getLong("crash.seed", System.nanoTime());
        System.out.println("StoreCrashTest seed=" + seed + " (replay with -Dcrash.seed=" + seed + "), store="
                + (store == null ? "embedded default" : store.url()));
        Random random = new Random(seed);
        Path data = dir.resolve("data");
        Path log = dir.resolve("hub.log");
        int acked = 0;
        for (int cycle = 0; cycle < CYCLES; cycle++) {
            try (HubProcess hub = HubProcess.start(data, store, log)) {
                String token = Files.readString(data.resolve(HubStore.MANAGER_TOKEN_FILE)).trim();
                verify(hub, token, "cycle " + cycle + " seed " + seed);
                int killAfter = random.nextInt(MAX_WRITE_PHASE_MS);
                AtomicReference<Throwable> writerError = new AtomicReference<>();
                long seedOfWriter = random.nextLong();
                int before = keys.size() + items.size();
                Thread writer = new Thread(() -> {
                    try {
                        write(hub, token, new Random(seedOfWriter));
                    } catch (Throwable t) {
                        writerError.set(t);
                    }
                }, "crash-writer");
                writer.start();
                Thread.sleep(killAfter);
                hub.kill();
                writer.join(30_000);
                assertThat(writer.isAlive()).as("writer ends once the hub is gone").isFalse();
                if (writerError.get() instanceof AssertionError e) {
                    throw e;
                }
                acked += keys.size() + items.size() - before;
            }
        }
        try (HubProcess hub = HubProcess.start(data, store, log)) {
            verify(hub, Files.readString(data.resolve(HubStore.MANAGER_TOKEN_FILE)).trim(), "final, seed " + seed);
            hub.stop();
        }
        System.out.println("StoreCrashTest: " + CYCLES + " kills, " + keys.size() + " keys and " + items.size()
                + " items checked, newest acknowledged resourceVersion " + maxAcked + ", " + acked + " acknowledged writes in all");
        assertThat(maxAcked).as("the write phases made writes").isGreaterThan(CYCLES);
    }

    /** Writes until the hub dies; records each acknowledged write. The request in flight at the kill is forgotten. */
    private void write(HubProcess hub, String token, Random random) throws Exception {
        while (true) {
            int n = ++counter;
            String target = null;
            try {
                switch (random.nextInt(8)) {
                    case 0, 1 -> {
                        JsonNode k = ok(201, manage(hub, token, "POST", "/internal/api-keys", "{\"team\":\"team-" + (n % 5) + "\"}"));
                        keys.put(k.get("id").asText(), new Key(k.get("id").asText(), k.get("key").asText(), false, rv(k)));
                    }
                    case 2 -> {
                        Key k = pick(random, new ArrayList<>(keys.values().stream().filter(x -> !x.revoked()).toList()));
                        if (k != null) {
                            target = "key:" + k.id();
                            JsonNode r = ok(200, manage(hub, token, "DELETE", "/internal/api-keys/" + k.id(), null));
                            keys.put(k.id(), new Key(k.id(), k.plaintext(), true, rv(r)));
                        }
                    }
                    case 3 -> {
                        String name = "tpl-" + n;
                        JsonNode r = ok(201, manage(hub, token, "POST", "/internal/templates", template(name, n)));
                        items.put("template:" + name, new Item("template", name, "v" + n, rv(r)));
                    }
                    case 4 -> {
                        Item t = pick(random, items.values().stream().filter(i -> i.kind().equals("template")).toList());
                        if (t != null) {
                            target = "template:" + t.name();
                            if (random.nextInt(4) == 0) {
                                ok(204, manage(hub, token, "DELETE", "/internal/templates/" + t.name(), null));
                                items.remove(target);
                                deletedTemplates.add(t.name());
                            } else {
                                JsonNode r = ok(200, manage(hub, token, "PUT", "/internal/templates/" + t.name(), template(t.name(), n)));
                                items.put(target, new Item("template", t.name(), "v" + n, rv(r)));
                            }
                        }
                    }
                    case 5 -> {
                        String name = "team-x" + n;
                        JsonNode r = ok(201, manage(hub, token, "POST", "/internal/teams", "{\"name\":\"" + name + "\"}"));
                        items.put("team:" + name, new Item("team", name, "", rv(r)));
                    }
                    case 6 -> {
                        String id = "c" + n;
                        JsonNode r = ok(201, manage(hub, token, "POST", "/internal/clusters", "{\"id\":\"" + id + "\"}"));
                        items.put("cluster:" + id, new Item("cluster", id, "", rv(r)));
                    }
                    default -> {
                        Item c = pick(random, items.values().stream().filter(i -> i.kind().equals("cluster")).toList());
                        if (c != null) {
                            target = "config:" + c.name();
                            JsonNode r = ok(200, manage(hub, token, "PUT", "/internal/clusters/" + c.name() + "/config",
                                    "{\"settings\":{\"n\":\"v" + n + "\"}}"));
                            items.put(target, new Item("config", c.name(), "v" + n, rv(r)));
                        }
                    }
                }
            } catch (java.io.IOException e) {
                // the hub died with this request in flight: its outcome is unknown, so stop checking its target
                if (target != null) {
                    keys.remove(target.substring("key:".length()));
                    items.remove(target);
                }
                return;
            }
        }
    }

    private static String template(String name, int n) {
        return "{\"name\":\"" + name + "\",\"poolSize\":0,\"envVars\":{\"V\":\"v" + n + "\"}}";
    }

    private long rv(JsonNode r) {
        long v = r.get("resourceVersion").asLong();
        assertThat(v).as("resourceVersion of an acknowledged write is above every earlier one").isGreaterThan(maxAcked);
        maxAcked = v;
        return v;
    }

    private static <T> T pick(Random random, List<T> from) {
        return from.isEmpty() ? null : from.get(random.nextInt(from.size()));
    }

    private void verify(HubProcess hub, String token, String when) throws Exception {
        for (Key k : keys.values()) {
            JsonNode stored = ok(200, manage(hub, token, "GET", "/internal/api-keys/" + k.id(), null));
            assertThat(stored.get("resourceVersion").asLong()).as("%s: key %s", when, k.id()).isEqualTo(k.rv());
            int status = send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.apiPort() + "/sandboxes"))
                    .header("X-API-Key", k.plaintext()).GET()).statusCode();
            assertThat(status).as("%s: public API with key %s (revoked: %s)", when, k.id(), k.revoked())
                    .isEqualTo(k.revoked() ? 401 : 200);
        }
        for (Item i : items.values()) {
            switch (i.kind()) {
                case "template" -> {
                    JsonNode t = ok(200, manage(hub, token, "GET", "/internal/templates/" + i.name(), null));
                    assertThat(t.get("resourceVersion").asLong()).as("%s: template %s", when, i.name()).isEqualTo(i.rv());
                    assertThat(t.path("envVars").path("V").asText()).as("%s: template %s", when, i.name()).isEqualTo(i.content());
                }
                case "cluster" -> {
                    JsonNode c = ok(200, manage(hub, token, "GET", "/internal/clusters/" + i.name(), null));
                    assertThat(c.get("resourceVersion").asLong()).as("%s: cluster %s", when, i.name()).isEqualTo(i.rv());
                }
                case "config" -> {
                    JsonNode c = ok(200, manage(hub, token, "GET", "/internal/clusters/" + i.name() + "/config", null));
                    assertThat(c.get("resourceVersion").asLong()).as("%s: config of %s", when, i.name()).isEqualTo(i.rv());
                    assertThat(c.path("settings").path("n").asText()).as("%s: config of %s", when, i.name()).isEqualTo(i.content());
                }
                default -> { }
            }
        }
        JsonNode teams = ok(200, manage(hub, token, "GET", "/internal/teams", null));
        Map<String, Long> teamVersions = new LinkedHashMap<>();
        teams.get("teams").forEach(t -> teamVersions.put(t.get("name").asText(), t.get("resourceVersion").asLong()));
        for (Item i : items.values()) {
            if (i.kind().equals("team")) {
                assertThat(teamVersions).as("%s: team %s", when, i.name()).containsEntry(i.name(), i.rv());
            }
        }
        for (String name : deletedTemplates) {
            int status = manage(hub, token, "GET", "/internal/templates/" + name, null).statusCode();
            assertThat(status).as("%s: deleted template %s", when, name).isEqualTo(404);
        }
        String metrics = manage(hub, token, "GET", "/metrics", null).body();
        double current = metrics.lines().filter(l -> l.startsWith("agentbox_store_resource_version"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElse(-1);
        assertThat(current).as("%s: hub-wide resourceVersion after restart", when).isGreaterThanOrEqualTo(maxAcked);
    }

    private static HttpResponse<String> manage(HubProcess hub, String token, String method, String path, String body) throws Exception {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.managementPort() + path))
                .header(TOKEN_HEADER, token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)));
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return HTTP.send(b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode ok(int status, HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as("%s %s: %s", r.request().method(), r.request().uri().getPath(), r.body()).isEqualTo(status);
        return r.body().isEmpty() ? Json.MAPPER.createObjectNode() : Json.MAPPER.readTree(r.body());
    }
}
