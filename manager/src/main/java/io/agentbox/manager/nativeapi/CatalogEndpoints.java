package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.protocol.v1.Template;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What sandboxes start from (docs/native-api.md#templates-and-snapshots): {@code /v1/templates}
 * (the hub's configured templates and the team's built ones; read and delete) and
 * {@code /v1/snapshots} (the team's snapshots; list with cursor paging, get, delete). A configured
 * template is deleted with the management API only (400 here). Snapshots are 501 on a worker's
 * local API.
 */
final class CatalogEndpoints implements NativeHandler.RouteFamily {
    private final ControlCore core;

    CatalogEndpoints(ControlCore core) {
        this.core = core;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("GET", "/v1/templates", c -> Reply.json(200, V1Json.page(templates(c.who()), null)));
        t.add("GET", "/v1/templates/{id}", c -> Reply.json(200, find(c.who(), c.param("id"))
                .orElseThrow(() -> V1Errors.of(404, "template '" + c.param("id") + "' not found"))));
        t.add("DELETE", "/v1/templates/{id}", c -> {
            String id = c.param("id");
            if (core.isConfigured(id)) {
                throw V1Errors.of(400, "template '" + id + "' is configured on the hub: delete it with the management "
                        + "API (DELETE /internal/templates/{name})");
            }
            // an admin deletes any team's built template as that team; another team's is unknown to anyone else
            Principal who = core.builtTemplate(c.who(), id).filter(b -> !b.team().equals(c.who().team()))
                    .map(b -> new Principal(b.team(), c.who().role())).orElse(c.who());
            boolean deleted;
            try {
                deleted = core.deleteTemplateLike(who, id);
            } catch (ApiException e) {
                if (e.status() != 403) {
                    throw e;
                }
                deleted = false;
            }
            if (!deleted) {
                throw V1Errors.of(404, "template '" + id + "' not found");
            }
            return Reply.noContent();
        });
        t.add("GET", "/v1/snapshots", c -> {
            int limit = c.intQuery("limit", 1, Cursor.MAX_LIMIT, Cursor.DEFAULT_LIMIT);
            // newest first, as the E2B listing: the key counts time backwards
            Cursor.Page<SnapshotStore.Snap> page = Cursor.page(core.snapshots(c.who()),
                    s -> new Cursor.Key(-s.createdAtMs(), s.snapshotId()), c.query("cursor"), limit);
            return Reply.json(200, V1Json.page(page.items().stream().map(V1Json::snapshot).toList(), page.next()));
        });
        t.add("GET", "/v1/snapshots/{id}", c -> Reply.json(200, V1Json.snapshot(core.findSnapshot(c.who(), c.param("id"))
                .orElseThrow(() -> V1Errors.of(404, "snapshot '" + c.param("id") + "' not found")))));
        t.add("DELETE", "/v1/snapshots/{id}", c -> {
            String id = c.param("id");
            if (core.findSnapshot(c.who(), id).isEmpty() || !core.deleteTemplateLike(c.who(), id)) {
                throw V1Errors.of(404, "snapshot '" + id + "' not found");
            }
            return Reply.noContent();
        });
    }

    /**
     * The Template {@code id} names (its id or one of its aliases) among those {@code who} sees; for
     * an admin key also another team's built template by id.
     */
    Optional<ObjectNode> find(Principal who, String id) {
        Optional<ObjectNode> own = match(templates(who), id);
        if (own.isPresent() || !who.isAdmin()) {
            return own;
        }
        return core.builtTemplate(who, id).flatMap(b -> match(templates(new Principal(b.team(), who.role())), id));
    }

    private static Optional<ObjectNode> match(List<ObjectNode> templates, String id) {
        return templates.stream().filter(o -> o.get("id").asText().equals(id) || contains(o.get("aliases"), id)).findFirst();
    }

    private static boolean contains(JsonNode array, String value) {
        for (JsonNode n : array) {
            if (n.asText().equals(value)) {
                return true;
            }
        }
        return false;
    }

    /** Template: {@code id, aliases[], kind (configured|built), clusters[], image?, cpuCount, memoryMb, diskSizeMb, network?, public, buildStatus, createdAt?, updatedAt?}. */
    private List<ObjectNode> templates(Principal who) {
        List<ObjectNode> out = new ArrayList<>();
        for (Template t : core.configuredTemplates()) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("id", t.getName());
            o.putArray("aliases").add(t.getName());
            o.put("kind", "configured");
            ArrayNode clusters = o.putArray("clusters");
            t.getClustersList().forEach(clusters::add);
            if (!t.getImage().isEmpty()) {
                o.put("image", t.getImage());
            }
            o.put("cpuCount", t.getCpuCount());
            o.put("memoryMb", t.getMemoryMb());
            o.put("diskSizeMb", t.getDiskSizeMb());
            o.put("network", t.getNetwork().isEmpty() ? "isolated" : t.getNetwork());
            o.put("poolSize", t.getPoolSize());
            o.put("public", true);
            o.put("buildStatus", "ready");
            out.add(o);
        }
        for (ObjectNode e : core.builtTemplates(who)) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("id", e.path("templateID").asText());
            o.set("aliases", e.path("aliases").isArray() ? e.get("aliases") : Json.MAPPER.createArrayNode());
            o.put("kind", "built");
            o.putArray("clusters");
            o.put("cpuCount", e.path("cpuCount").asInt());
            o.put("memoryMb", e.path("memoryMB").asInt());
            o.put("diskSizeMb", e.path("diskSizeMB").asInt());
            o.put("public", e.path("public").asBoolean());
            o.put("buildStatus", e.path("buildStatus").asText());
            for (String time : List.of("createdAt", "updatedAt")) {
                if (e.hasNonNull(time)) {
                    o.put(time, Instant.parse(e.get(time).asText()).toString());
                }
            }
            out.add(o);
        }
        return out;
    }
}
