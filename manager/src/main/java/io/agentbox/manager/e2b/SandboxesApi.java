package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.util.concurrent.ListenableFuture;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.sandboxes.SandboxPauses;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.agentbox.manager.store.SandboxLifecycle;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.agentbox.worker.metrics.WorkerMeters;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The E2B sandbox lifecycle (docs/e2b-wire.md#sandbox-routes) over the owning worker's {@code SandboxService}
 * and the hub store. Tenancy: a principal sees only its team's sandboxes; others are 404.
 *
 * <p>Errors ({@link ApiException}, E2B shape {@code {"code","message"}}): 400 bad input, 404
 * unknown/foreign/ended sandbox or unknown template (message lists existing templates), 429 the
 * team is at its sandbox limit or over its create rate ({@link TeamQuotas}), 503 no
 * worker cluster connected, pool exhausted, or the template's image not ready on any cluster
 * (the message says what each cluster is doing: pulling with progress, or the error), 504 worker timeout, 500 other worker failures.
 */
final class SandboxesApi {
    /** Default and largest sandbox timeout in seconds (docs/e2b-wire.md#sandbox-routes: default 300 s), shared with the worker. */
    static final int DEFAULT_TIMEOUT_SECONDS = SandboxTimeouts.DEFAULT_SECONDS;
    static final int MAX_TIMEOUT_SECONDS = SandboxTimeouts.MAX_SECONDS;
    static final long WORKER_CALL_TIMEOUT_MS = 60_000;
    /** A create gives up on a cluster whose worker is silent this long, and tries another one. */
    static final Duration CREATE_SILENCE_LIMIT = Duration.ofSeconds(3);
    static final int MAX_METADATA_ENTRIES = 64;
    static final int MAX_METADATA_CHARS = 1024;
    /** How long a worker waits for a snapshot's template to arrive over the watch (CreateSandboxRequest.template_wait_ms). */
    static final int SNAPSHOT_TEMPLATE_WAIT_MS = 5000;
    /** Template names a 404's hint lists at most. */
    static final int MAX_NAMES_IN_HINT = 30;

    /** Counter of sandboxes created, tagged {@code team}. */
    static final String CREATED_METRIC = "agentbox.sandbox.creates"; // not "...created": Prometheus reserves the _created suffix
    /** Counter of creates refused with 429, tagged {@code team} and {@code limit} (maxSandboxes, createsPerSecond). */
    static final String LIMITED_METRIC = "agentbox.sandboxes.limited";
    /**
     * Timer of creates that got a sandbox, from picking a cluster to the worker's answer (failovers
     * included), tagged {@code cluster}: the claim as the API sees it, without auth and bookkeeping.
     */
    public static final String CLAIM_METRIC = "agentbox.hub.claim";

    private final ApiStore store;
    private final ClusterRouter router;
    private final EnvdTokens tokens;
    private final WorkerSandboxes workers;
    private final TeamQuotas quotas;
    private final MeterRegistry meters;
    /** Built once: per create only the cluster tag is looked up. */
    private final Meter.MeterProvider<Timer> claims;
    private final SandboxPauses pauses;
    private final List<TemplateKind> kinds;

    SandboxesApi(ApiStore store, ClusterRouter router, EnvdTokens tokens, TeamQuotas quotas, MeterRegistry meters,
                 List<TemplateKind> kinds) {
        this.kinds = kinds; // the handler may add kinds that need this API (snapshots) once it exists
        this.store = store;
        this.router = router;
        this.tokens = tokens;
        this.workers = new WorkerSandboxes(store, router);
        this.quotas = quotas;
        this.meters = meters;
        this.claims = Timer.builder(CLAIM_METRIC).description("sandbox creates, from picking a cluster to the worker's answer")
                .serviceLevelObjectives(WorkerMeters.LATENCY_BUCKETS).withRegistry(meters);
        this.pauses = new SandboxPauses(store);
    }

    /** Registers the sandbox routes of docs/e2b-wire.md#sandbox-routes on {@code routes}. */
    void routes(RouteTable.Builder<E2bEndpoint> routes) {
        for (String base : List.of("/sandboxes", "/v2/sandboxes")) {
            for (String path : List.of(base, base + "/")) {
                routes.add("POST", path, c -> Reply.json(201, create(c.who(), c.body(E2bBodies.NewSandbox.class))));
                routes.add("GET", path, c -> {
                    String[] next = new String[1];
                    ArrayNode list = list(c.who(), ListQuery.parse(c.query()), next);
                    return Reply.json(200, list).withHeader("X-Next-Token", next[0]);
                });
            }
        }
        // connect (resume), pause and metrics: PauseApi, MetricsApi
        routes.add("GET", "/sandboxes/{id}", c -> Reply.json(200, detail(c.who(), c.param("id"))));
        routes.add("DELETE", "/sandboxes/{id}", c -> {
            kill(c.who(), c.param("id"));
            return Reply.noContent();
        });
        routes.add("POST", "/sandboxes/{id}/timeout", c -> {
            timeout(c.who(), c.param("id"), c.body(E2bBodies.SetTimeout.class));
            return Reply.noContent();
        });
        routes.add("POST", "/sandboxes/{id}/refreshes", c -> {
            refresh(c.who(), c.param("id"), c.body(E2bBodies.Refresh.class));
            return Reply.noContent();
        });
    }

    /**
     * The template {@code templateId} names: a configured template of that name, else the first
     * {@link TemplateKind} that knows it.
     *
     * @throws ApiException 404 naming the configured templates when nothing knows it
     */
    /** How answers name the template {@code r} started from: the E2B id and alias of a built template or snapshot, else the hub template's name. */
    /** {@link #label} remembering each template's answer: one listing asks the store once per template, not per row. */
    Function<SandboxRecord, TemplateLabel> labels() {
        Map<String, TemplateLabel> seen = new HashMap<>();
        return r -> seen.computeIfAbsent(r.template(), t -> label(r));
    }

    TemplateLabel label(SandboxRecord r) {
        return label(r.template());
    }

    TemplateLabel label(String hubTemplate) {
        for (TemplateKind kind : kinds) {
            Optional<TemplateLabel> l = kind.label(hubTemplate);
            if (l.isPresent()) {
                return l.get();
            }
        }
        return TemplateLabel.of(hubTemplate);
    }

    Template resolve(Principal who, String templateId) {
        Optional<Template> configured = store.template(templateId);
        if (configured.isPresent()) {
            return configured.get();
        }
        for (TemplateKind kind : kinds) {
            Optional<Template> t = kind.resolve(who, templateId);
            if (t.isPresent()) {
                return t.get();
            }
        }
        List<String> names = new ArrayList<>(store.templates().stream().map(Template::getName).toList());
        kinds.forEach(k -> names.addAll(k.names(who)));
        String shown = names.stream().limit(MAX_NAMES_IN_HINT).collect(Collectors.joining(", "))
                + (names.size() > MAX_NAMES_IN_HINT ? ", ... (" + names.size() + " in all)" : "");
        throw ApiException.e2b(404, "template '" + templateId + "' not found; available templates: " + shown);
    }

    /** {@code POST /sandboxes}, {@code POST /v2/sandboxes}: body NewSandbox → 201 Sandbox. */
    ObjectNode create(Principal who, E2bBodies.NewSandbox body) {
        SandboxRecord record = createRecord(who, body).record();
        return E2bJson.sandbox(record, label(record), tokens.token(record.sandboxId()));
    }

    /**
     * Creates a sandbox for {@code who} as {@code body} says and answers the hub's record of it with
     * the worker's answer to the create (any API's create; no second call to the worker needed).
     */
    Listed createRecord(Principal who, E2bBodies.NewSandbox body) {
        String templateId = templateId(body.templateID());
        String pinnedCluster = null;
        int sep = templateId.indexOf("::");
        if (sep >= 0) {
            pinnedCluster = templateId.substring(0, sep);
            templateId = templateId.substring(sep + 2);
        }
        Template template = resolve(who, templateId);
        String name = template.getName();
        int templateWaitMs = 0;
        if (!template.getSnapshot().isEmpty()) {
            // a snapshot's template (pinned to the cluster that made it, or served from the hub's copy
            // everywhere once that copy is made) may not have reached the worker yet when the create
            // follows createSnapshot at once
            templateWaitMs = SNAPSHOT_TEMPLATE_WAIT_MS;
            if (template.getClustersCount() == 1) {
                pinnedCluster = template.getClusters(0); // only that cluster's image store has it
            }
        }
        CreateFields.check(body, template);
        SandboxLifecycle lifecycle = CreateFields.lifecycle(body);
        // a stored default beyond the maximum predates the shared limit: the limit wins
        int timeout = timeoutSeconds(body.timeout(), "timeout", template.getDefaultTimeoutSeconds() > 0
                ? Math.min(template.getDefaultTimeoutSeconds(), MAX_TIMEOUT_SECONDS) : DEFAULT_TIMEOUT_SECONDS);
        Map<String, String> metadata = body.metadata();
        Map<String, String> envVars = body.envVars();
        checkMetadata(metadata);
        checkEnvVars(envVars);
        String notReady = router.notReady(name, template.getImage(), pinnedCluster);
        if (notReady != null) { // before the quota: a create that cannot run costs the team nothing
            throw ApiException.e2b(503, notReady);
        }

        TeamQuotas.Slot slot;
        try {
            slot = quotas.admit(who.team());
        } catch (TeamQuotas.Exceeded e) {
            meters.counter(LIMITED_METRIC, "team", who.team(), "limit", e.limit()).increment();
            throw ApiException.e2b(429, e.getMessage());
        }
        try (slot) {
            Listed created = create(who, name, pinnedCluster, timeout, metadata, envVars, lifecycle, templateWaitMs);
            meters.counter(CREATED_METRIC, "team", who.team()).increment();
            return created;
        }
    }

    private Listed create(Principal who, String name, String pinnedCluster, int timeout, Map<String, String> metadata,
                              Map<String, String> envVars, SandboxLifecycle lifecycle, int templateWaitMs) {
        // the end time is decided here, once: the worker uses it as given (timeout_seconds rides
        // along for workers that predate end_at_ms), and a failover to another cluster keeps it
        long endAt = System.currentTimeMillis() + timeout * 1000L;
        CreateSandboxRequest request = CreateSandboxRequest.newBuilder()
                .setTemplate(name).setTimeoutSeconds(timeout).setEndAtMs(endAt).putAllEnvVars(envVars)
                .putAllMetadata(metadata).setOwner(who.team()).setTemplateWaitMs(templateWaitMs)
                .setAutoPause(lifecycle.autoPause()).setAutoPauseDropMemory(lifecycle.autoPause() && !lifecycle.keepMemory())
                .setAutoResume(lifecycle.autoResume()).build();
        Set<String> silent = new LinkedHashSet<>();
        long claimStart = System.nanoTime();
        SandboxInfo info = null;
        String cluster = null;
        while (info == null) {
            cluster = pinnedCluster != null ? pinnedCluster : router.pickCluster(name, silent);
            Channel channel = cluster == null || silent.contains(cluster) ? null : router.channel(cluster);
            if (channel == null) {
                if (!silent.isEmpty()) {
                    throw ApiException.e2b(503, "create sandbox: worker cluster(s) " + String.join(", ", silent)
                            + " did not answer (nothing heard over the tunnel for " + CREATE_SILENCE_LIMIT.toSeconds()
                            + " s) and no other cluster is available");
                }
                throw ApiException.e2b(503, pinnedCluster != null
                        ? "worker cluster '" + pinnedCluster + "' is not connected"
                        : "no worker cluster is connected; start a worker (agentbox worker --hub …) and retry");
            }
            info = createOn(channel, cluster, request);
            if (info == null) {
                silent.add(cluster);
            }
        }
        claims.withTags("cluster", cluster).record(System.nanoTime() - claimStart, TimeUnit.NANOSECONDS);
        long now = System.currentTimeMillis();
        SandboxRecord record = new SandboxRecord(info.getSandboxId(), cluster, name, who.team(), metadata,
                info.getStartedAtMs() > 0 ? info.getStartedAtMs() : now,
                info.getEndAtMs() > 0 ? info.getEndAtMs() : endAt, false, null, lifecycle, 0);
        store.insertCreatedSandbox(record); // one adopted from the worker's report meanwhile wins: same sandbox
        return new Listed(record, info, true);
    }

    /** {@code GET /sandboxes/{id}} → 200 SandboxDetail. */
    ObjectNode detail(Principal who, String sandboxId) {
        Listed v = view(who, sandboxId);
        return E2bJson.detail(v.record(), label(v.record()), v.info(), tokens.token(sandboxId));
    }

    /**
     * The caller's sandbox with its worker's view ({@code info} null and {@code reachable} false
     * while its cluster is disconnected: answered at once from the record).
     *
     * @throws ApiException 404 unknown, foreign or ended
     */
    Listed view(Principal who, String sandboxId) {
        SandboxRecord r = record(who, sandboxId);
        if (router.channel(r.clusterId()) == null) {
            return new Listed(r, null, false);
        }
        Owned s = owned(who, sandboxId);
        SandboxInfo info = get(s);
        pauses.noteState(s.record, info);
        return new Listed(s.record, info, true);
    }

    /** {@code DELETE /sandboxes/{id}} → true (204); 404 when unknown, foreign or already ended. */
    void kill(Principal who, String sandboxId) {
        Owned s = owned(who, sandboxId);
        try {
            blocking(s.channel).killSandbox(SandboxRef.newBuilder().setSandboxId(sandboxId).build());
        } catch (StatusRuntimeException e) {
            if (E2bErrors.sandboxGone(e)) {
                store.markEnded(sandboxId, "gone");
                throw notFound(sandboxId);
            }
            throw E2bErrors.fromWorker(e, "kill sandbox");
        }
        store.markEnded(sandboxId, "killed");
    }

    /** {@code POST /sandboxes/{id}/timeout} body {@code {"timeout": s}}: end = now + timeout (204). */
    void timeout(Principal who, String sandboxId, E2bBodies.SetTimeout body) {
        if (body.timeout() == null) {
            throw ApiException.e2b(400, "field 'timeout' (seconds) is required");
        }
        int timeout = timeoutSeconds(body.timeout(), "timeout", DEFAULT_TIMEOUT_SECONDS);
        setTimeout(owned(who, sandboxId), timeout);
    }

    /** {@code POST /sandboxes/{id}/refreshes} body {@code {"duration"?: s}}: extends like connect (204). */
    void refresh(Principal who, String sandboxId, E2bBodies.Refresh body) {
        int duration = timeoutSeconds(body.duration(), "duration", DEFAULT_TIMEOUT_SECONDS);
        Owned s = owned(who, sandboxId);
        if (System.currentTimeMillis() + duration * 1000L > get(s).getEndAtMs()) {
            setTimeout(s, duration);
        }
    }

    /**
     * {@code GET /v2/sandboxes} / {@code GET /sandboxes}: the team's running sandboxes matching the
     * query, oldest first; {@code nextToken[0]} receives the token of the next page or null.
     */
    ArrayNode list(Principal who, ListQuery q, String[] nextToken) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        nextToken[0] = null;
        List<ObjectNode> rows = new ArrayList<>();
        Function<SandboxRecord, TemplateLabel> labels = labels();
        for (Listed l : listed(who.team(), r -> q.matches(r.metadata()))) {
            if (q.wants(l.state())) {
                rows.add(E2bJson.listed(l.record(), labels.apply(l.record()), l.info(), l.reachable()));
            }
        }
        int from = Math.min(q.offset(), rows.size());
        int to = Math.min(rows.size(), from + q.limit());
        rows.subList(from, to).forEach(out::add);
        if (to < rows.size()) {
            nextToken[0] = ListQuery.token(to);
        }
        return out;
    }

    /**
     * A sandbox as a listing sees it: the hub's record and, when its worker was asked, the worker's
     * view ({@code info}, else null); {@code reachable} false while its cluster is disconnected.
     */
    record Listed(SandboxRecord record, SandboxInfo info, boolean reachable) {
        /** {@code running} or {@code paused}; {@value E2bJson#UNREACHABLE} while the cluster is away. */
        String state() {
            return reachable ? E2bJson.state(record, info) : E2bJson.UNREACHABLE;
        }
    }

    /**
     * The running and paused sandboxes of {@code team} (every team when null) whose records pass
     * {@code filter}, oldest first, each checked with its worker: sandboxes a worker runs that the
     * store lacks (created through another API) are adopted, records the worker no longer runs are
     * marked ended and left out. Only records read before the workers were asked can be ended: one
     * created meanwhile is missing from its worker's answer although it runs.
     */
    List<Listed> listed(String team, Predicate<SandboxRecord> filter) {
        List<SandboxRecord> before = store.activeSandboxes(team);
        Set<String> askedAbout = before.stream().map(SandboxRecord::sandboxId).collect(Collectors.toSet());
        Map<String, Map<String, SandboxInfo>> live = liveByCluster(team, before);
        live.forEach((cluster, infos) -> infos.values().forEach(i -> {
            if (store.sandbox(i.getSandboxId()).isEmpty()) {
                workers.adopt(cluster, i);
            }
        }));
        List<Listed> rows = new ArrayList<>();
        for (SandboxRecord r : store.activeSandboxes(team)) {
            if (!filter.test(r)) {
                continue;
            }
            Map<String, SandboxInfo> clusterLive = live.get(r.clusterId());
            SandboxInfo info = clusterLive == null ? null : clusterLive.get(r.sandboxId());
            // one created after the worker answered is listed from its record alone
            if (clusterLive != null && info == null && askedAbout.contains(r.sandboxId())) {
                store.markEnded(r.sandboxId(), "gone"); // the worker no longer runs it (timed out)
                continue;
            }
            if (info != null) {
                pauses.noteState(r, info);
            }
            rows.add(new Listed(r, info, clusterLive != null));
        }
        return rows;
    }

    /** Live sandboxes of the team (every team when null) per connected cluster (clusters that cannot be asked are absent). */
    private Map<String, Map<String, SandboxInfo>> liveByCluster(String team, List<SandboxRecord> records) {
        Map<String, Map<String, SandboxInfo>> out = new HashMap<>();
        Set<String> clusters = new LinkedHashSet<>(router.connectedClusters());
        records.forEach(r -> clusters.add(r.clusterId()));
        for (String cluster : clusters) {
            Channel channel = router.channel(cluster);
            if (channel == null) {
                continue;
            }
            try {
                Map<String, SandboxInfo> byId = new LinkedHashMap<>();
                for (SandboxInfo i : blocking(channel).listSandboxes(
                        ListSandboxesRequest.newBuilder().setOwner(team == null ? "" : team).build()).getSandboxesList()) {
                    byId.put(i.getSandboxId(), i);
                }
                out.put(cluster, byId);
            } catch (StatusRuntimeException e) {
                // unreachable worker: fall back to the hub's records for that cluster
            }
        }
        return out;
    }

    // ---- helpers -------------------------------------------------------------------------------

    /**
     * Calls CreateSandbox on one cluster; null when its worker went silent (nothing heard over its
     * tunnel for {@link #CREATE_SILENCE_LIMIT} while waiting, the call is cancelled), so the caller
     * tries another cluster. A slow but live worker (cold start) is waited for up to the call deadline.
     */
    private SandboxInfo createOn(Channel channel, String cluster, CreateSandboxRequest request) {
        ListenableFuture<SandboxInfo> call = SandboxServiceGrpc.newFutureStub(channel)
                .withDeadlineAfter(WORKER_CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS).createSandbox(request);
        try {
            while (true) {
                try {
                    return call.get(250, TimeUnit.MILLISECONDS);
                } catch (TimeoutException waiting) {
                    if (router.probeSilence(cluster).compareTo(CREATE_SILENCE_LIMIT) > 0) {
                        call.cancel(true);
                        return null;
                    }
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StatusRuntimeException s) {
                throw E2bErrors.fromWorker(s, "create sandbox");
            }
            throw ApiException.e2b(500, "create sandbox failed: " + e.getCause());
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw ApiException.e2b(503, "create sandbox: interrupted");
        }
    }

    record Owned(SandboxRecord record, Channel channel) {}

    /** The caller's running sandbox and its worker channel; 404 if unknown/foreign/ended, 503 if its cluster is away. */
    Owned owned(Principal who, String sandboxId) {
        SandboxRecord r = record(who, sandboxId);
        Channel channel = router.channel(r.clusterId());
        if (channel == null) {
            throw ApiException.e2b(503, "sandbox " + sandboxId + " is unreachable: its worker cluster '" + r.clusterId()
                    + "' is disconnected from the hub; retry once the cluster reconnects");
        }
        return new Owned(r, channel);
    }

    /** The caller's running sandbox; 404 if unknown, foreign or ended. */
    private SandboxRecord record(Principal who, String sandboxId) {
        return workers.find(sandboxId).filter(rec -> rec.team().equals(who.team())).orElseThrow(() -> notFound(sandboxId));
    }

    private SandboxInfo get(Owned s) {
        try {
            return blocking(s.channel).getSandbox(SandboxRef.newBuilder().setSandboxId(s.record.sandboxId()).build());
        } catch (StatusRuntimeException e) {
            if (E2bErrors.sandboxGone(e)) {
                store.markEnded(s.record.sandboxId(), "gone");
                throw notFound(s.record.sandboxId());
            }
            throw E2bErrors.fromWorker(e, "get sandbox");
        }
    }

    private void setTimeout(Owned s, int seconds) {
        long endAt = System.currentTimeMillis() + seconds * 1000L; // decided here, as for a create
        try {
            SandboxInfo info = blocking(s.channel).setTimeout(SetTimeoutRequest.newBuilder()
                    .setSandboxId(s.record.sandboxId()).setTimeoutSeconds(seconds).setEndAtMs(endAt).build());
            store.updateEndAt(s.record.sandboxId(), info.getEndAtMs() > 0 ? info.getEndAtMs() : endAt);
        } catch (StatusRuntimeException e) {
            if (E2bErrors.sandboxGone(e)) {
                store.markEnded(s.record.sandboxId(), "gone");
                throw notFound(s.record.sandboxId());
            }
            if (ErrorReason.SANDBOX_PAUSED.in(e)) { // E2B: a paused sandbox has no TTL to set (docs/e2b-wire.md#pause)
                throw ApiException.e2b(404, "sandbox " + s.record.sandboxId() + " is paused and has no timeout to set; "
                        + "resume it with connect (which sets its timeout)");
            }
            throw E2bErrors.fromWorker(e, "set timeout");
        }
    }

    static SandboxServiceGrpc.SandboxServiceBlockingStub blocking(Channel channel) {
        return SandboxServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WORKER_CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    static ApiException notFound(String sandboxId) {
        return ApiException.e2b(404, "sandbox " + sandboxId + " not found");
    }

    /** {@code templateID}: absent = {@code base}; else a non-blank label. */
    private static String templateId(String v) {
        if (v == null) {
            return "base";
        }
        if (v.isBlank()) {
            throw ApiException.e2b(400, "field 'templateID' must be a non-empty string");
        }
        return InputText.label("field 'templateID'", v);
    }

    /** A timeout in seconds ({@code value} of the body field {@code field}): absent = {@code dflt}, else 1..{@value #MAX_TIMEOUT_SECONDS}. */
    static int timeoutSeconds(Long value, String field, int dflt) {
        if (value == null) {
            return dflt;
        }
        if (value < 1 || value > MAX_TIMEOUT_SECONDS) {
            throw ApiException.e2b(400, "field '" + field + "' must be an integer number of seconds between 1 and "
                    + MAX_TIMEOUT_SECONDS);
        }
        return value.intValue();
    }

    private static void checkMetadata(Map<String, String> metadata) {
        nonNullValues("metadata", metadata);
        if (metadata.size() > MAX_METADATA_ENTRIES) {
            throw ApiException.e2b(400, "at most " + MAX_METADATA_ENTRIES + " metadata entries");
        }
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            String key = InputText.quote(e.getKey());
            if (e.getKey().length() + e.getValue().length() > MAX_METADATA_CHARS) {
                throw ApiException.e2b(400, "metadata entry '" + key + "' longer than " + MAX_METADATA_CHARS + " chars");
            }
            InputText.label("field 'metadata' key '" + key + "'", e.getKey());
            InputText.label("field 'metadata." + key + "'", e.getValue());
        }
    }

    /** Names a shell can export, values without NUL: a NUL would make every command of the sandbox fail. */
    private static void checkEnvVars(Map<String, String> envVars) {
        nonNullValues("envVars", envVars);
        InputText.env("envVars", envVars);
    }

    /** JSON null is no string: {@code {"k": null}} in a map of strings is refused like any other non-string. */
    private static void nonNullValues(String field, Map<String, String> map) {
        map.forEach((k, v) -> {
            if (v == null) {
                throw ApiException.e2b(400, "field '" + field + "." + InputText.quote(k) + "' must be a string");
            }
        });
    }
}
