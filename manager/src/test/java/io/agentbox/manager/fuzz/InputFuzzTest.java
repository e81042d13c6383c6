package io.agentbox.manager.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.BaseTemplate;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.Standalone;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.testing.RawHttp;
import io.agentbox.manager.testing.RawHttp.Reply;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes every public (E2B control plane, on the hub and on the worker API), data-plane (envd
 * Connect RPCs, {@code /files}, {@code /health}, with a real sandbox behind) and management route
 * with mutated methods, paths, queries, headers and bodies over raw sockets, then checks the
 * system still works (create, run, kill); the native {@code /v1} routes are fuzzed on the hub too.
 * No answer may be a 5xx, except the ones the E2B protocol
 * prescribes: 501 for an E2B route AgentBox does not implement (or Connect {@code unimplemented})
 * 502 "The sandbox was not found" for a request that does not address the live sandbox, and 502
 * "The sandbox is running but port is not open" for a port nothing listens on (the base template is
 * on the isolated network, so its ports are forwarded).
 *
 * <p>Seeded: {@code -Dfuzz.seed=N} replays a run (the seed is printed first), {@code -Dfuzz.requests}
 * sets the count (default 10,000), {@code -Dfuzz.only=I} sends only request I. Each failure
 * prints the request it sent and the answer.
 */
class InputFuzzTest {
    static final long SEED = Long.getLong("fuzz.seed", new SecureRandom().nextLong());
    static final int REQUESTS = Integer.getInteger("fuzz.requests", 10_000);
    static final int ONLY = Integer.getInteger("fuzz.only", -1);
    static final int THREADS = 4;
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(20);
    static final int MAX_REPORTED = 15;
    /** An image no registry serves (nothing listens on port 1): a template build from it fails at once. */
    static final String UNPULLABLE = "127.0.0.1:1/fz/none:1";

    Standalone system;
    WorkerApi workerApi;
    String key;
    String token;
    JsonNode data;
    JsonNode control;

    @Test
    void noInputGetsA5xxAndTheSystemStillWorksAfterwards(@TempDir Path dir) throws Exception {
        System.out.println("InputFuzzTest seed=" + SEED + " requests=" + REQUESTS + " (replay: -Dfuzz.seed=" + SEED + ")");
        system = Standalone.start(HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement("127.0.0.1", 0).withBase(new BaseTemplate(null, 2)), Duration.ofSeconds(60), line -> { });
        try {
            key = system.hub().newAdminKey().orElseThrow();
            token = system.hub().newManagerToken().orElseThrow();
            workerApi = WorkerApi.start(system.worker(), "127.0.0.1", 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> RawHttp.exchange(workerApi.port(),
                    RawHttp.request("GET", "/v2/sandboxes", (byte[]) null, "X-API-Key: " + key)).status() == 200);
            data = create();
            control = create();
            upload(data, "/tmp/fz.txt", "fuzz".getBytes(StandardCharsets.UTF_8));
            run();
            healthy();
        } finally {
            if (workerApi != null) {
                workerApi.close();
            }
            system.close();
        }
    }

    private void run() throws Exception {
        List<FuzzRequest> routes = routes();
        Map<String, LongAdder> statuses = new TreeMap<>();
        Map<String, LongAdder> perStatus = new ConcurrentHashMap<>();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger next = new AtomicInteger(ONLY >= 0 ? ONLY : 0);
        int end = ONLY >= 0 ? ONLY + 1 : REQUESTS;
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        for (int t = 0; t < THREADS; t++) {
            pool.execute(() -> {
                for (int i; (i = next.getAndIncrement()) < end; ) {
                    Random rnd = new Random(SEED ^ (i * 0x9E3779B97F4A7C15L));
                    FuzzRequest r = pinTemplate(new Mutator(rnd).mutate(routes.get(rnd.nextInt(routes.size()))));
                    String verdict = send(i, r, perStatus);
                    if (verdict != null && failed.incrementAndGet() <= MAX_REPORTED) {
                        failures.add(verdict);
                    }
                }
            });
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(10, TimeUnit.MINUTES)).isTrue();
        double seconds = (System.nanoTime() - t0) / 1e9;
        statuses.putAll(perStatus);
        System.out.printf("InputFuzzTest: %d requests in %.1f s over %d routes; answers %s%n", end - (ONLY >= 0 ? ONLY : 0),
                seconds, routes.size(), statuses);
        failures.forEach(System.out::println);
        assertThat(failed.get()).as("requests answered with a 5xx or not at all (seed " + SEED + "), first ones:\n"
                + String.join("\n", failures)).isZero();
    }

    /** Sends one request; null when the answer is acceptable, else what to report. */
    private String send(int index, FuzzRequest r, Map<String, LongAdder> statuses) {
        Reply reply;
        try {
            reply = RawHttp.exchange(r.port(), r.wire(), r.streaming(), true, ANSWER_TIMEOUT);
        } catch (SocketTimeoutException e) {
            statuses.computeIfAbsent("timeout", k -> new LongAdder()).increment();
            return report(index, r, "no answer within " + ANSWER_TIMEOUT.toSeconds() + " s");
        } catch (IOException e) {
            // an answer cut off midway (or a reset): a server fault as much as a 5xx
            statuses.computeIfAbsent("broken", k -> new LongAdder()).increment();
            return report(index, r, "broken answer: " + e);
        }
        statuses.computeIfAbsent(reply.status() < 0 ? "closed" : Integer.toString(reply.status()), k -> new LongAdder())
                .increment();
        if (reply.status() == 201 && r.route().contains("sandboxes")) {
            killCreated(r.port(), reply);
        }
        if (reply.status() >= 500 && r.method().equals("HEAD")) {
            // a HEAD answer has no body to tell which 5xx it is: ask the same as GET
            return send(index, r.with("GET", r.path(), r.query(), r.headers(), r.body()), new ConcurrentHashMap<>());
        }
        return acceptable(r, reply) ? null : report(index, r, reply.head().split("\r\n")[0] + " " + reply.text());
    }

    private boolean acceptable(FuzzRequest r, Reply reply) {
        if (reply.status() < 500) {
            return true;
        }
        String message = reply.message();
        JsonNode json = reply.json();
        if (reply.status() == 504 && json != null && "deadline_exceeded".equals(json.path("code").asText())) {
            return clientDeadline(r) != null && clientDeadline(r) < 1000; // the deadline the client itself set
        }
        if (reply.status() == 501) {
            return message.startsWith("AgentBox does not support this E2B route")
                    || json != null && "unimplemented".equals(json.path("code").asText());
        }
        // E2B's answer for a sandbox that does not exist, but never for the one that does (on the hub;
        // the worker API sees only sandboxes created through it)
        boolean aboutLive = r.port() == system.hub().apiPort() && json != null
                && data.get("sandboxID").asText().equals(json.path("sandboxId").asText());
        if (reply.status() == 502 && "The sandbox is running but port is not open".equals(message)) {
            return true; // E2B's answer for a closed port of a running sandbox
        }
        return reply.status() == 502 && "The sandbox was not found".equals(message) && !aboutLive;
    }

    /** The request's {@code Connect-Timeout-Ms} in milliseconds, or null. */
    private static Long clientDeadline(FuzzRequest r) {
        for (String h : r.headers()) {
            if (h.regionMatches(true, 0, "Connect-Timeout-Ms:", 0, 19)) {
                try {
                    return Long.parseLong(h.substring(19).trim());
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
        return null;
    }

    private static String report(int index, FuzzRequest r, String answer) {
        return "--- request " + index + " (seed " + SEED + ", replay with -Dfuzz.seed=" + SEED + " -Dfuzz.only=" + index
                + "), route " + r.route() + ":\n    " + r.describe(1500) + "\n  answer: "
                + (answer.length() > 500 ? answer.substring(0, 500) + "…" : answer);
    }

    private void killCreated(int port, Reply reply) {
        JsonNode j = reply.json();
        // E2B's Sandbox has sandboxID; the native one has id and envdAccessToken (snapshots and files have neither)
        String id = j == null ? null : j.hasNonNull("sandboxID") ? j.get("sandboxID").asText()
                : j.hasNonNull("envdAccessToken") && j.hasNonNull("id") ? j.get("id").asText() : null;
        if (id != null) {
            try {
                RawHttp.exchange(port, RawHttp.request("DELETE", "/sandboxes/" + id,
                        (byte[]) null, "X-API-Key: " + key));
            } catch (IOException e) {
                // it times out on its own (fuzz creates ask for 30 s)
            }
        }
    }

    // ---- the routes, each as a well-formed request ----------------------------------------------

    private List<FuzzRequest> routes() throws Exception {
        List<FuzzRequest> out = new ArrayList<>();
        int hub = system.hub().apiPort();
        controlPlane(out, "hub", hub);
        controlPlane(out, "worker-api", workerApi.port());
        dataPlane(out, hub);
        nativeRoutes(out, hub);
        managementRoutes(out, system.hub().managementPort());
        return out;
    }

    private void controlPlane(List<FuzzRequest> out, String surface, int port) {
        String ctl = control.get("sandboxID").asText();
        String dataId = data.get("sandboxID").asText();
        List<String> h = List.of("X-API-Key: " + key, "Content-Type: application/json");
        String create = "{\"templateID\":\"base\",\"timeout\":30,\"metadata\":{\"fz\":\"1\"},\"envVars\":{\"A\":\"1\"}}";
        Object[][] routes = {
                {"GET", "/templates", "", null}, {"GET", "/agentbox/metrics", "", null},
                {"GET", "/v2/sandboxes", "state=running&limit=10", null}, {"GET", "/sandboxes", "metadata=fz%3D1", null},
                {"POST", "/v2/sandboxes", "", create}, {"POST", "/sandboxes", "", create},
                {"GET", "/sandboxes/" + ctl, "", null}, {"DELETE", "/sandboxes/zzzzzzzzzzzz-local", "", null},
                {"POST", "/sandboxes/" + ctl + "/connect", "", "{\"timeout\":300}"},
                {"POST", "/v2/sandboxes/" + ctl + "/connect", "", "{\"timeout\":300}"},
                {"POST", "/sandboxes/" + ctl + "/timeout", "", "{\"timeout\":300}"},
                {"POST", "/sandboxes/" + ctl + "/refreshes", "", "{\"duration\":60}"},
                {"POST", "/sandboxes/" + ctl + "/pause", "", "{}"}, {"GET", "/v2/sandboxes/" + ctl + "/logs", "", null},
                {"GET", "/sandboxes/metrics", "sandbox_ids=" + ctl, null}, {"POST", "/v3/templates", "", "{}"},
                {"GET", "/snapshots", "limit=5", null}, {"GET", "/volumes", "", null}, {"GET", "/teams", "", null},
                {"GET", "/sandboxes/" + ctl + "/metrics", "start=0", null}, {"GET", "/templates/aliases/base", "", null},
                {"GET", "/sandboxes/" + dataId + "/8080/index.html", "a=1", null},
        };
        for (Object[] r : routes) {
            out.add(new FuzzRequest(surface + " " + r[0] + " " + r[1], port, (String) r[0], (String) r[1], (String) r[2], h,
                    r[3] == null ? null : ((String) r[3]).getBytes(StandardCharsets.UTF_8), false));
        }
        out.add(new FuzzRequest(surface + " port proxy", port, "GET", "/", "", List.of("E2b-Sandbox-Id: " + dataId,
                "E2b-Sandbox-Port: 8080"), null, false));
    }

    private void dataPlane(List<FuzzRequest> out, int port) throws Exception {
        String id = data.get("sandboxID").asText();
        List<String> auth = List.of("E2b-Sandbox-Id: " + id, "X-Access-Token: " + data.get("envdAccessToken").asText(),
                "Authorization: Basic dXNlcjo=");
        List<String> json = with(auth, "Content-Type: application/json", "Connect-Protocol-Version: 1");
        List<String> stream = with(auth, "Content-Type: application/connect+json", "Connect-Protocol-Version: 1");
        out.add(new FuzzRequest("envd GET /health", port, "GET", "/health", "", auth, null, false));
        out.add(new FuzzRequest("envd GET /files", port, "GET", "/files", "path=/tmp/fz.txt&username=user", auth, null, false));
        out.add(new FuzzRequest("envd POST /files octet", port, "POST", "/files", "path=/tmp/fz/up.txt&username=user",
                with(auth, "Content-Type: application/octet-stream"), "uploaded".getBytes(StandardCharsets.UTF_8), false));
        out.add(new FuzzRequest("envd POST /files gzip", port, "POST", "/files", "path=/tmp/fz/gz.txt",
                with(auth, "Content-Type: application/octet-stream", "Content-Encoding: gzip"), gzip("zipped"), false));
        String multipart = "--zz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/tmp/fz/mp.txt\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\nmultipart\r\n--zz--\r\n";
        out.add(new FuzzRequest("envd POST /files multipart", port, "POST", "/files", "username=user",
                with(auth, "Content-Type: multipart/form-data; boundary=zz"), multipart.getBytes(StandardCharsets.UTF_8), false));
        for (String rest : new String[] {"/envs", "/metrics", "/init", "/files/compose"}) {
            out.add(new FuzzRequest("envd " + rest, port, "POST", rest, "", json, "{}".getBytes(StandardCharsets.UTF_8), false));
        }
        String[][] unary = {
                {"process.Process/List", "{}"},
                {"process.Process/SendInput", "{\"process\":{\"pid\":1},\"input\":{\"stdin\":\"aGk=\"}}"},
                {"process.Process/SendSignal", "{\"process\":{\"pid\":999999},\"signal\":\"SIGNAL_SIGTERM\"}"},
                {"process.Process/CloseStdin", "{\"process\":{\"tag\":\"fz\"}}"},
                {"process.Process/Update", "{\"process\":{\"pid\":999999},\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}"},
                {"filesystem.Filesystem/ListDir", "{\"path\":\"/tmp\",\"depth\":1}"},
                {"filesystem.Filesystem/Stat", "{\"path\":\"/tmp/fz.txt\"}"},
                {"filesystem.Filesystem/MakeDir", "{\"path\":\"/tmp/fz/dir\"}"},
                {"filesystem.Filesystem/Move", "{\"source\":\"/tmp/fz/up.txt\",\"destination\":\"/tmp/fz/moved.txt\"}"},
                {"filesystem.Filesystem/Remove", "{\"path\":\"/tmp/fz/moved.txt\"}"},
                {"filesystem.Filesystem/CreateWatcher", "{\"path\":\"/tmp\",\"recursive\":false}"},
                {"filesystem.Filesystem/GetWatcherEvents", "{\"watcherId\":\"nope\"}"},
                {"filesystem.Filesystem/RemoveWatcher", "{\"watcherId\":\"nope\"}"},
        };
        for (String[] u : unary) {
            out.add(new FuzzRequest("envd " + u[0], port, "POST", "/" + u[0], "", json,
                    u[1].getBytes(StandardCharsets.UTF_8), false));
        }
        String[][] streams = {
                {"process.Process/Start", "{\"process\":{\"cmd\":\"/bin/echo\",\"args\":[\"hi\"],\"envs\":{\"A\":\"1\"},"
                        + "\"cwd\":\"/tmp\"},\"stdin\":false}"},
                {"process.Process/Connect", "{\"process\":{\"pid\":999999}}"},
                {"filesystem.Filesystem/WatchDir", "{\"path\":\"/tmp\",\"recursive\":false}"},
        };
        for (String[] s : streams) {
            out.add(new FuzzRequest("envd " + s[0], port, "POST", "/" + s[0], "", stream,
                    Mutator.envelope(s[1].getBytes(StandardCharsets.UTF_8)), true));
        }
    }

    /**
     * Every native {@code /v1} route the hub has: item routes address the live control sandbox,
     * except those that would end it or copy its files (delete, snapshot), which name none.
     */
    private void nativeRoutes(List<FuzzRequest> out, int port) {
        String ctl = control.get("sandboxID").asText();
        String none = "zzzzzzzzzzzz-local";
        Map<String, String> bodies = Map.ofEntries(
                Map.entry("POST /v1/sandboxes", "{\"template\":\"base\",\"timeoutSeconds\":30,\"metadata\":{\"fz\":\"1\"},"
                        + "\"env\":{\"A\":\"1\"}}"),
                Map.entry("POST /v1/sandboxes/{id}/timeout", "{\"timeoutSeconds\":300}"),
                Map.entry("POST /v1/sandboxes/{id}/resume", "{\"timeoutSeconds\":300}"),
                Map.entry("POST /v1/sandboxes/{id}/pause", "{}"),
                Map.entry("POST /v1/sandboxes/{id}/reset", "{}"),
                Map.entry("POST /v1/sandboxes/{id}/snapshots", "{\"name\":\"fz-snap:v1\"}"),
                Map.entry("POST /v1/sandboxes/{id}/commands", "{\"cmd\":\"echo fz $A\",\"env\":{\"A\":\"1\"},"
                        + "\"cwd\":\"/tmp\",\"user\":\"user\",\"timeoutSeconds\":5,\"tag\":\"fz\"}"),
                Map.entry("POST /v1/sandboxes/{id}/commands/{pid}/stdin", "{\"data\":\"hi\",\"eof\":true}"),
                Map.entry("POST /v1/sandboxes/{id}/commands/{pid}/signal", "{\"signal\":\"SIGTERM\"}"),
                Map.entry("PUT /v1/sandboxes/{id}/files", "native file"),
                Map.entry("POST /v1/sandboxes/{id}/files", "--zz\r\nContent-Disposition: form-data; name=\"file\"; "
                        + "filename=\"mp.txt\"\r\n\r\nmultipart\r\n--zz--\r\n"),
                Map.entry("POST /v1/sandboxes/{id}/files/mkdir", "{\"path\":\"/tmp/fz/v1dir\"}"),
                Map.entry("POST /v1/keys", "{\"name\":\"fz\",\"team\":\"fz-team\",\"role\":\"user\"}"),
                Map.entry("POST /v1/templates", "{\"name\":\"fz-tpl\",\"image\":\"" + UNPULLABLE + "\",\"steps\":[{\"run\":"
                        + "\"true\",\"user\":\"root\"},{\"env\":{\"A\":\"1\"}},{\"workdir\":\"/tmp\"}],\"cpuCount\":1,"
                        + "\"memoryMb\":256}"));
        Map<String, String> queries = Map.of(
                "GET /v1/sandboxes", "state=running&metadata=fz%3D1&limit=10",
                "GET /v1/sandboxes/{id}/files", "path=/tmp/fz.txt",
                "PUT /v1/sandboxes/{id}/files", "path=/tmp/fz/v1.txt",
                "POST /v1/sandboxes/{id}/files", "path=/tmp/fz",
                "DELETE /v1/sandboxes/{id}/files", "path=/tmp/fz/v1.txt",
                "GET /v1/sandboxes/{id}/files/list", "path=/tmp&depth=2",
                "GET /v1/sandboxes/{id}/files/stat", "path=/tmp/fz.txt");
        for (String route : system.hub().api().nativeApi().routes()) {
            String method = route.substring(0, route.indexOf(' '));
            String template = route.substring(route.indexOf(' ') + 1);
            boolean ends = method.equals("DELETE") && template.equals("/v1/sandboxes/{id}") || template.endsWith("/snapshots");
            String path = template.replace("{id}", ends ? none : ctl).replace("{pid}", "999999")
                    .replace("{buildId}", "fz-build").replace("{name}", "fz-thing");
            String body = bodies.get(route);
            if (body == null && (method.equals("POST") || method.equals("PUT"))) {
                throw new AssertionError("no fuzz body for native route " + route + "; add one");
            }
            String contentType = route.equals("POST /v1/sandboxes/{id}/files") ? "multipart/form-data; boundary=zz"
                    : route.equals("PUT /v1/sandboxes/{id}/files") ? "application/octet-stream" : "application/json";
            out.add(new FuzzRequest("native " + route, port, method, path, queries.getOrDefault(route, ""),
                    List.of("Authorization: Bearer " + key, "Content-Type: " + contentType),
                    body == null ? null : body.getBytes(StandardCharsets.UTF_8), route.equals("GET /v1/events")));
        }
    }

    /** Every route the management server has, with parameters that name objects the fuzzer owns. */
    private void managementRoutes(List<FuzzRequest> out, int port) {
        Map<String, String> params = Map.of("{name}", "fz-thing", "{id}", "fz-cluster");
        Map<String, String> bodies = Map.of(
                "POST /internal/api-keys", "{\"team\":\"fz-team\",\"role\":\"user\",\"name\":\"fz\",\"expiresAt\":\"2030-01-01T00:00:00Z\"}",
                "POST /internal/teams", "{\"name\":\"fz-team\",\"description\":\"fuzz\"}",
                "POST /internal/templates", "{\"name\":\"fz-thing\",\"poolSize\":0,\"envVars\":{\"A\":\"1\"},\"clusters\":[\"fz-cluster\"]}",
                "PUT /internal/templates/{name}", "{\"poolSize\":0,\"clusters\":[\"fz-cluster\"],\"resourceVersion\":1}",
                "POST /internal/clusters", "{\"id\":\"fz-cluster\",\"description\":\"fuzz\"}",
                // high limits, so the fuzzed variants rarely stop creates; healthy() clears the defaults anyway
                "PUT /internal/limits", "{\"maxSandboxes\":100000,\"createsPerSecond\":10000}",
                "PUT /internal/teams/{name}/limits", "{\"maxSandboxes\":5,\"createsPerSecond\":1.5}",
                "PUT /internal/clusters/{id}/config", "{\"hostAliases\":[{\"ip\":\"10.0.0.1\",\"hostnames\":[\"a.fz\"]}],"
                        + "\"settings\":{\"k\":\"v\"}}",
                "PUT /internal/snapshots/{id}", "{\"poolSize\":1}");
        List<String> h = List.of("Authorization: Bearer " + token, "Content-Type: application/json");
        for (String route : system.hub().management().routes()) {
            String method = route.substring(0, route.indexOf(' '));
            String path = route.substring(route.indexOf(' ') + 1);
            for (Map.Entry<String, String> p : params.entrySet()) {
                path = path.replace(p.getKey(), p.getValue());
            }
            String body = bodies.get(route);
            if (body == null && (method.equals("POST") || method.equals("PUT")) && !route.endsWith("/token")) {
                throw new AssertionError("no fuzz body for management route " + route + "; add one");
            }
            String query = route.startsWith("GET /internal/api-keys") ? "team=fz-team"
                    : method.equals("DELETE") ? "resourceVersion=1" : "";
            out.add(new FuzzRequest("management " + route, port, method, path, query, h,
                    body == null ? null : body.getBytes(StandardCharsets.UTF_8), false));
        }
    }

    // ---- setup and the check afterwards ---------------------------------------------------------

    private JsonNode create() throws Exception {
        Reply r = RawHttp.exchange(system.hub().apiPort(), RawHttp.request("POST", "/v2/sandboxes",
                "{\"templateID\":\"base\",\"timeout\":900}", "X-API-Key: " + key, "Content-Type: application/json"));
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json();
    }

    private void upload(JsonNode sandbox, String path, byte[] content) throws Exception {
        Reply r = RawHttp.exchange(system.hub().apiPort(), RawHttp.request("POST", "/files?path=" + path, content,
                "E2b-Sandbox-Id: " + sandbox.get("sandboxID").asText(),
                "X-Access-Token: " + sandbox.get("envdAccessToken").asText(), "Content-Type: application/octet-stream"));
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }

    /** The live sandbox still answers, and a normal create → run → kill works on hub and management API. */
    private void healthy() throws Exception {
        int hub = system.hub().apiPort();
        Reply health = RawHttp.exchange(hub, RawHttp.request("GET", "/health", (byte[]) null,
                "E2b-Sandbox-Id: " + data.get("sandboxID").asText()));
        assertThat(health.status()).as("the data-plane sandbox after the fuzz: " + health).isEqualTo(204);
        // fuzzed PUT /internal/limits may have left a tight hub-wide quota: the create below is not about quotas
        Reply cleared = RawHttp.exchange(system.hub().managementPort(), RawHttp.request("PUT", "/internal/limits",
                "{\"maxSandboxes\":null,\"createsPerSecond\":null}".getBytes(StandardCharsets.UTF_8),
                "Authorization: Bearer " + token, "Content-Type: application/json"));
        assertThat(cleared.status()).as(cleared.toString()).isEqualTo(200);
        JsonNode fresh = create();
        Reply run = RawHttp.exchange(hub, RawHttp.request("POST", "/process.Process/Start",
                Mutator.envelope("{\"process\":{\"cmd\":\"/bin/echo\",\"args\":[\"still alive\"]}}".getBytes(StandardCharsets.UTF_8)),
                "E2b-Sandbox-Id: " + fresh.get("sandboxID").asText(),
                "X-Access-Token: " + fresh.get("envdAccessToken").asText(), "Content-Type: application/connect+json",
                "Connect-Protocol-Version: 1"));
        assertThat(run.status()).as(run.toString()).isEqualTo(200);
        String stdout = java.util.Base64.getEncoder().encodeToString("still alive\n".getBytes(StandardCharsets.UTF_8));
        assertThat(run.text()).as("the command's output").contains(stdout);
        Reply kill = RawHttp.exchange(hub, RawHttp.request("DELETE", "/sandboxes/" + fresh.get("sandboxID").asText(),
                (byte[]) null, "X-API-Key: " + key));
        assertThat(kill.status()).as(kill.toString()).isEqualTo(204);
        Reply ping = RawHttp.exchange(system.hub().managementPort(), RawHttp.request("GET", "/ping", (byte[]) null));
        assertThat(ping.status()).isEqualTo(200);
        Reply local = RawHttp.exchange(workerApi.port(), RawHttp.request("GET", "/v2/sandboxes", (byte[]) null,
                "X-API-Key: " + key));
        assertThat(local.status()).as(local.toString()).isEqualTo(200);
    }

    private static List<String> with(List<String> base, String... more) {
        List<String> out = new ArrayList<>(base);
        out.addAll(List.of(more));
        return out;
    }

    private static byte[] gzip(String s) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(s.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    /**
     * A template body whose mutation still parses as an object keeps {@code clusters:["fz-cluster"]}
     * (a cluster that is not connected) and a pool size of 0, so the fuzzer never makes the local
     * worker start pools of sandboxes; a native build body likewise keeps an image no registry
     * serves (its build fails at the pull). Everything else about them is fuzzed.
     */
    static FuzzRequest pinTemplate(FuzzRequest r) {
        boolean build = r.route().equals("native POST /v1/templates");
        if (!(r.route().contains("/internal/templates") || build) || r.body() == null) {
            return r;
        }
        try {
            if (Json.MAPPER.readTree(r.body()) instanceof ObjectNode o) {
                if (build) { // a build that starts fails at its pull: no build sandbox, no warm pool
                    o.remove("fromTemplate");
                    o.put("image", UNPULLABLE);
                } else {
                    o.putArray("clusters").add("fz-cluster");
                    o.put("poolSize", 0);
                }
                return r.with(r.method(), r.path(), r.query(), r.headers(), Json.bytes(o));
            }
        } catch (IOException e) {
            // not JSON: the server refuses it as it is
        }
        return r;
    }
}
