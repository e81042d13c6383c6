package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.e2b.TemplateLabel;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.sandboxes.SandboxPauses;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SnapshotStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@code /v1/sandboxes}: create, list (filters, cursor paging), get, delete, timeout, reset, pause,
 * resume, snapshot (docs/native-api.md#sandboxes), over the lifecycle core the E2B routes use
 * ({@link ControlCore}). A caller sees its team's sandboxes; an admin key sees every team's
 * ({@code ?team=} filters the list) and may act on any sandbox. Errors: 400 bad input, 404 unknown
 * or another team's sandbox, 409 paused/running conflicts, 429 team limits, 503 no capacity or
 * cluster away; 501 for snapshot and reset on a worker's local API.
 */
final class SandboxEndpoints implements NativeHandler.RouteFamily {
    static final Set<String> STATES = Set.of("running", "paused", "unreachable");

    private final ControlCore core;
    private final ImageTemplates images;

    SandboxEndpoints(ControlCore core, ImageTemplates images) {
        this.core = core;
        this.images = images;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("POST", "/v1/sandboxes", this::create);
        t.add("GET", "/v1/sandboxes", this::list);
        t.add("GET", "/v1/sandboxes/{id}", c -> Reply.json(200, sandbox(core.get(as(c), c.param("id")))));
        t.add("DELETE", "/v1/sandboxes/{id}", c -> {
            core.kill(as(c), c.param("id"));
            return Reply.noContent();
        });
        t.add("POST", "/v1/sandboxes/{id}/timeout", c -> {
            V1Bodies.Timeout b = c.body(V1Bodies.Timeout.class);
            if (b.timeoutSeconds() == null) {
                throw V1Errors.of(400, "field 'timeoutSeconds' is required");
            }
            core.setTimeout(as(c), c.param("id"), timeout(b.timeoutSeconds()));
            return Reply.noContent();
        });
        t.add("POST", "/v1/sandboxes/{id}/reset", c -> {
            Principal who = as(c);
            c.body(); // refuses a malformed body; {} or none is fine
            SandboxRecord r = core.reset(who, c.param("id"));
            ObjectNode o = sandbox(core.get(who, r.sandboxId()));
            o.put("envdAccessToken", core.accessToken(r.sandboxId()));
            return Reply.json(200, o);
        });
        t.add("POST", "/v1/sandboxes/{id}/pause", c -> {
            Principal who = as(c);
            c.body();
            core.pause(who, c.param("id"));
            return Reply.noContent();
        });
        t.add("POST", "/v1/sandboxes/{id}/resume", c -> {
            Principal who = as(c);
            V1Bodies.Timeout b = c.body(V1Bodies.Timeout.class);
            int seconds = b.timeoutSeconds() == null ? SandboxPauses.RESUME_DEFAULT_SECONDS : timeout(b.timeoutSeconds());
            core.resume(who, c.param("id"), seconds);
            return Reply.json(200, sandbox(core.get(who, c.param("id"))));
        });
        t.add("POST", "/v1/sandboxes/{id}/snapshots", c -> {
            Principal who = as(c);
            V1Bodies.NewSnapshot b = c.body(V1Bodies.NewSnapshot.class);
            SnapshotStore.Snap s = core.snapshot(who, c.param("id"), b.name());
            return Reply.json(201, V1Json.snapshot(s));
        });
    }

    private Reply create(V1Call c) {
        V1Bodies.NewSandbox b = c.body(V1Bodies.NewSandbox.class);
        if ((b.template() != null ? 1 : 0) + (b.snapshot() != null ? 1 : 0) + (b.image() != null ? 1 : 0) > 1) {
            throw V1Errors.of(400, "fields 'template', 'snapshot' and 'image' exclude each other: a sandbox starts from one");
        }
        String from = b.snapshot() != null ? b.snapshot() : b.template() != null ? b.template() : "base";
        String field = b.snapshot() != null ? "snapshot" : "template";
        if (b.image() != null) {
            if (b.image().isBlank()) {
                throw V1Errors.of(400, "field 'image' must be a non-empty string");
            }
            InputText.label("field 'image'", b.image());
        }
        if (from.isBlank()) {
            throw V1Errors.of(400, "field '" + field + "' must be a non-empty string");
        }
        InputText.label("field '" + field + "'", from);
        if (from.contains("::")) {
            throw V1Errors.of(400, "field '" + field + "' must not contain '::'; pin a cluster with field 'cluster'");
        }
        String cluster = b.cluster() == null ? null : InputText.label("field 'cluster'", b.cluster());
        Long timeout = b.timeoutSeconds() == null ? null : (long) timeout(b.timeoutSeconds());
        Principal who = c.who();
        if (b.image() != null) {
            from = images.readyTemplate(who, b.image());
        }
        ControlCore.Sandbox created = core.create(who, from, cluster, timeout, b.env(), b.metadata());
        SandboxRecord r = created.record();
        ObjectNode o = sandbox(created);
        if (b.snapshot() != null) {
            o.put("snapshotId", b.snapshot());
        }
        if (b.image() != null) {
            o.put("image", ImageTemplates.normalise(b.image()));
        }
        o.put("envdAccessToken", core.accessToken(r.sandboxId()));
        return Reply.json(201, o);
    }

    private Reply list(V1Call c) {
        Principal who = c.who();
        String team = c.query("team");
        if (team != null && !who.isAdmin() && !team.equals(who.team())) {
            throw V1Errors.of(403, "query parameter 'team': only an admin key lists another team's sandboxes");
        }
        if (team == null && !who.isAdmin()) {
            team = who.team();
        }
        Set<String> states = states(c.query().getValues("state"));
        String template = c.query("template");
        String cluster = c.query("cluster");
        Map<String, String> metadata = metadata(c.query().getValues("metadata"));
        int limit = c.intQuery("limit", 1, Cursor.MAX_LIMIT, Cursor.DEFAULT_LIMIT);
        String cursor = c.query("cursor");
        if (cursor != null) {
            Cursor.decode(cursor); // a bad cursor is a 400 before the workers are asked
        }
        Function<SandboxRecord, TemplateLabel> labels = core.labels();
        Predicate<SandboxRecord> filter = r -> (template == null || named(labels.apply(r), template))
                && (cluster == null || cluster.equals(r.clusterId()))
                && metadata.entrySet().stream().allMatch(e -> e.getValue().equals(r.metadata().get(e.getKey())));
        List<ControlCore.Sandbox> all = new ArrayList<>();
        for (ControlCore.Sandbox s : core.list(team, filter)) {
            if (states.isEmpty() || states.contains(s.state())) {
                all.add(s);
            }
        }
        Cursor.Page<ControlCore.Sandbox> page = Cursor.page(all,
                s -> new Cursor.Key(s.record().createdAtMs(), s.record().sandboxId()), cursor, limit);
        return Reply.json(200, V1Json.page(page.items().stream().map(s -> V1Json.sandbox(s, labels.apply(s.record()))).toList(), page.next()));
    }

    /**
     * The principal that acts on sandbox {@code id}: the caller, or for an admin key the sandbox's
     * own team (so an admin reaches every team's sandboxes through the same tenancy checks).
     */
    Principal as(V1Call c) {
        return actingFor(core, c.who(), c.param("id"));
    }

    static Principal actingFor(ControlCore core, Principal who, String sandboxId) {
        if (!who.isAdmin()) {
            return who;
        }
        return core.find(sandboxId).filter(r -> !r.team().equals(who.team()))
                .map(r -> new Principal(r.team(), who.role())).orElse(who);
    }

    static int timeout(long seconds) {
        return ControlCore.timeoutSeconds(seconds, "timeoutSeconds");
    }

    private static Set<String> states(List<String> values) {
        Set<String> out = new HashSet<>();
        if (values == null) {
            return out;
        }
        for (String v : values) {
            for (String one : v.split(",")) {
                String s = one.trim();
                if (s.isEmpty()) {
                    continue;
                }
                if (!STATES.contains(s)) {
                    throw V1Errors.of(400, "query parameter 'state': '" + InputText.quote(s)
                            + "' is not a sandbox state; use running, paused or unreachable, comma-separated");
                }
                out.add(s);
            }
        }
        return out;
    }

    /** {@code metadata=k=v}, repeatable; every pair must match. */
    private static Map<String, String> metadata(List<String> values) {
        Map<String, String> out = new LinkedHashMap<>();
        if (values == null) {
            return out;
        }
        for (String v : values) {
            int eq = v.indexOf('=');
            if (eq <= 0) {
                throw V1Errors.of(400, "query parameter 'metadata' must be key=value, got '" + InputText.quote(v) + "'");
            }
            out.put(v.substring(0, eq), v.substring(eq + 1));
        }
        return out;
    }

    private ObjectNode sandbox(ControlCore.Sandbox s) {
        return V1Json.sandbox(s, core.labels().apply(s.record()));
    }

    /** Whether {@code l} (the template a sandbox started from) is the one E2B calls {@code name} (its id or alias). */
    private static boolean named(TemplateLabel l, String name) {
        return name.equals(l.templateId()) || name.equals(l.alias());
    }
}
