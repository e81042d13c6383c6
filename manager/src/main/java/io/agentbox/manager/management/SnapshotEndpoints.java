package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.manager.store.SnapshotStore.Snap;
import java.time.Instant;
import java.util.List;

/**
 * {@code /internal/snapshots}: the snapshots of every team (made through the E2B API,
 * docs/snapshots-and-reset.md) and their warm pools. {@code PUT /internal/snapshots/{id}} sets the
 * pool size of the template serving snapshot {@code id} (the E2B snapshot id, percent-encoded:
 * {@code acme%2Fsnap%3Av1}); the worker cluster holding the snapshot then keeps that many idle
 * sandboxes of it. Other template fields of a snapshot follow the sandbox it was taken of.
 */
final class SnapshotEndpoints {
    private final SnapshotStore snapshots;

    SnapshotEndpoints(SnapshotStore snapshots) {
        this.snapshots = snapshots;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/internal/snapshots", true, this::list),
                new Route("GET", "/internal/snapshots/{id}", true, this::get),
                new Route("PUT", "/internal/snapshots/{id}", true, this::update));
    }

    private Reply list(Call call) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("snapshots");
        snapshots.listAll(0).forEach(s -> items.add(json(s)));
        return Reply.json(200, out);
    }

    private Reply get(Call call) {
        return Reply.json(200, json(find(call.param("id"))));
    }

    private Reply update(Call call) {
        Snap s = find(call.param("id"));
        ManagementBodies.SnapshotPool b = call.body(ManagementBodies.SnapshotPool.class);
        if (b.poolSize() == null) {
            throw ManagementBodies.bad("poolSize is required (0..1000)");
        }
        snapshots.setPoolSize(s, b.poolSize());
        return Reply.json(200, json(s));
    }

    private Snap find(String id) {
        return snapshots.bySnapshotId(id).orElseThrow(() -> ApiException.e2b(404, "snapshot '" + id + "' not found"));
    }

    private ObjectNode json(Snap s) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("snapshotID", s.snapshotId());
        ArrayNode names = o.putArray("names");
        s.names().forEach(names::add);
        o.put("team", s.team());
        o.put("sourceSandboxID", s.sourceSandbox());
        o.put("clusterID", s.clusterId());
        o.put("template", s.templateName());
        o.put("poolSize", snapshots.templateSpec(s.templateName()).map(t -> t.getPoolSize()).orElse(0));
        o.put("createdAt", Instant.ofEpochMilli(s.createdAtMs()).toString());
        return o;
    }
}
