package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.BuiltTemplate;
import java.time.Instant;
import java.util.List;

/**
 * Building templates (docs/native-api.md#building-templates): {@code POST /v1/templates} requests
 * and starts a build in one call through the machinery of E2B's {@code Template.build}
 * ({@link ControlCore#buildTemplate}); the builds of a template, one build, and its log by offset.
 *
 * <p>Scoping: a template is the caller's team's (by id or alias), or any team's by id for an admin
 * key; another team's is 404. A configured template has no builds (an empty page). A worker's
 * local API answers 501 for the build request and 404 for built templates (it has none).
 */
final class TemplateEndpoints implements NativeHandler.RouteFamily {
    /** Log entries per page at most. */
    static final int MAX_LOG_PAGE = 1000;
    static final int DEFAULT_LOG_PAGE = 200;

    private final ControlCore core;
    private final CatalogEndpoints catalog;

    TemplateEndpoints(ControlCore core, CatalogEndpoints catalog) {
        this.core = core;
        this.catalog = catalog;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("POST", "/v1/templates", c -> {
            NewTemplate body = c.body(NewTemplate.class);
            Build b = core.buildTemplate(c.who(), body.requireName(), body.cpu(), body.memory(), body.request());
            ObjectNode o = catalog.find(c.who(), b.templateId()).orElseGet(Json.MAPPER::createObjectNode);
            o.put("id", b.templateId());
            o.put("buildId", b.buildId());
            o.set("build", build(b));
            return Reply.json(202, o);
        });
        t.add("GET", "/v1/templates/{id}/builds", c -> {
            int limit = c.intQuery("limit", 1, Cursor.MAX_LIMIT, Cursor.DEFAULT_LIMIT);
            String cursor = c.query("cursor");
            if (core.isConfigured(c.param("id"))) {
                return Reply.json(200, V1Json.page(List.of(), null));
            }
            // newest first: the key counts time backwards
            Cursor.Page<Build> page = Cursor.page(core.builds(template(c)), b -> new Cursor.Key(-b.createdAtMs(), b.buildId()),
                    cursor, limit);
            return Reply.json(200, V1Json.page(page.items().stream().map(TemplateEndpoints::build).toList(), page.next()));
        });
        t.add("GET", "/v1/templates/{id}/builds/{buildId}", c -> Reply.json(200, build(build(c, template(c)))));
        t.add("GET", "/v1/templates/{id}/builds/{buildId}/logs", c -> {
            int offset = c.intQuery("offset", 0, Integer.MAX_VALUE, 0);
            int limit = c.intQuery("limit", 1, MAX_LOG_PAGE, DEFAULT_LOG_PAGE);
            Build b = build(c, template(c));
            // the status before the entries: every entry is written before the final status, so with a final
            // status this page holds the last entries
            String status = b.status();
            List<TemplateBuildStore.LogEntry> entries = core.buildLogs(b, offset, limit);
            ObjectNode o = Json.MAPPER.createObjectNode();
            ArrayNode logs = o.putArray("logs");
            for (TemplateBuildStore.LogEntry e : entries) {
                ObjectNode l = logs.addObject();
                l.put("timestamp", Instant.ofEpochMilli(e.atMs()).toString());
                l.put("level", e.level());
                l.put("message", e.message());
                if (e.step() != null && !e.step().isEmpty()) {
                    l.put("step", e.step());
                }
            }
            o.put("status", status);
            o.put("nextOffset", offset + entries.size());
            return Reply.json(200, o);
        });
    }

    private BuiltTemplate template(V1Call c) {
        String id = c.param("id");
        return core.builtTemplate(c.who(), id).orElseThrow(() -> V1Errors.of(404, "template '" + id + "' not found"));
    }

    private Build build(V1Call c, BuiltTemplate t) {
        String buildId = c.param("buildId");
        return core.build(t, buildId).orElseThrow(() -> V1Errors.of(404, "build '" + buildId + "' of template '"
                + c.param("id") + "' not found"));
    }

    /**
     * Build: {@code buildId, templateId, status (waiting|building|ready|error), startedAt, finishedAt?,
     * error?, errorStep?, cpuCount, memoryMb, tags[], cluster?, logCount}.
     */
    static ObjectNode build(Build b) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("buildId", b.buildId());
        o.put("templateId", b.templateId());
        o.put("status", b.status());
        o.put("startedAt", Instant.ofEpochMilli(b.createdAtMs()).toString());
        if (b.finishedAtMs() != null) {
            o.put("finishedAt", Instant.ofEpochMilli(b.finishedAtMs()).toString());
        }
        if (TemplateBuildStore.ERROR.equals(b.status())) {
            o.put("error", b.reasonMessage() == null ? "unknown error" : b.reasonMessage());
            if (b.reasonStep() != null) {
                o.put("errorStep", b.reasonStep());
            }
        }
        o.put("cpuCount", b.cpuCount());
        o.put("memoryMb", b.memoryMb());
        ArrayNode tags = o.putArray("tags");
        b.tags().forEach(tags::add);
        if (b.clusterId() != null && !b.clusterId().isEmpty()) {
            o.put("cluster", b.clusterId());
        }
        o.put("logCount", b.logCount());
        return o;
    }
}
