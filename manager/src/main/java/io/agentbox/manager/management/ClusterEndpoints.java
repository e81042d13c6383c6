package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.management.Route.Reply;
import io.agentbox.manager.store.ClusterConfig;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.ClusterStore;
import io.agentbox.manager.store.RegisteredCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code /internal/clusters}: register (the token is in that response only), list, get, remove,
 * rotate the token, and read or replace the config pushed to the cluster's worker.
 */
final class ClusterEndpoints {
    /** Would be shadowed by {@code GET /internal/clusters/status}, so no cluster may have this id. */
    static final String RESERVED_ID = "status";

    private final ClusterStore clusters;

    ClusterEndpoints(ClusterStore clusters) {
        this.clusters = clusters;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/internal/clusters", true, this::list),
                new Route("POST", "/internal/clusters", true, this::register),
                new Route("GET", "/internal/clusters/{id}", true, this::get),
                new Route("DELETE", "/internal/clusters/{id}", true, this::delete),
                new Route("POST", "/internal/clusters/{id}/token", true, this::rotate),
                new Route("GET", "/internal/clusters/{id}/config", true, this::getConfig),
                new Route("PUT", "/internal/clusters/{id}/config", true, this::putConfig));
    }

    private Reply list(Call call) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("clusters");
        clusters.list().forEach(c -> items.add(ManagementJson.cluster(c)));
        return Reply.json(200, out);
    }

    private Reply register(Call call) {
        BodyFields b = call.body().only(Set.of("id", "description"));
        String id = b.requiredString("id");
        if (RESERVED_ID.equals(id)) {
            throw BodyFields.bad("cluster id '" + RESERVED_ID + "' is reserved");
        }
        return Reply.json(201, withToken(clusters.register(id, b.string("description", ""))));
    }

    private Reply get(Call call) {
        return Reply.json(200, ManagementJson.cluster(require(call.param("id"))));
    }

    private Reply delete(Call call) {
        clusters.delete(call.param("id"));
        return Reply.noContent();
    }

    private Reply rotate(Call call) {
        return Reply.json(200, withToken(clusters.rotateToken(call.param("id"))));
    }

    private Reply getConfig(Call call) {
        return Reply.json(200, ManagementJson.config(require(call.param("id"))));
    }

    private Reply putConfig(Call call) {
        BodyFields b = call.body().only(Set.of("clusterId", "hostAliases", "settings", "resourceVersion"));
        String id = call.param("id");
        String bodyId = b.string("clusterId", id);
        if (!bodyId.equals(id)) {
            throw BodyFields.bad("clusterId in the body ('" + bodyId + "') differs from the path ('" + id + "')");
        }
        List<ClusterConfig.HostAlias> aliases = new ArrayList<>();
        var node = b.node().get("hostAliases");
        if (node != null && !node.isNull()) {
            if (!node.isArray()) {
                throw BodyFields.bad("hostAliases must be an array of {ip, hostnames}");
            }
            for (var alias : node) {
                if (!alias.isObject()) {
                    throw BodyFields.bad("hostAliases must be an array of {ip, hostnames}");
                }
                BodyFields a = new BodyFields((ObjectNode) alias).only(Set.of("ip", "hostnames"));
                aliases.add(new ClusterConfig.HostAlias(a.requiredString("ip"), a.strings("hostnames")));
            }
        }
        Map<String, String> settings = b.stringMap("settings");
        ClusterRecord r = clusters.setConfig(id, new ClusterConfig(aliases, settings), call.expectedVersion(b));
        return Reply.json(200, ManagementJson.config(r));
    }

    private ClusterRecord require(String id) {
        return clusters.get(id).orElseThrow(() -> ApiException.e2b(404, "cluster '" + id + "' not found"));
    }

    private static ObjectNode withToken(RegisteredCluster c) {
        ObjectNode out = ManagementJson.cluster(c.record());
        out.put("token", c.token());
        return out;
    }
}
