package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.store.ClusterConfig;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.ClusterStore;
import io.agentbox.manager.store.RegisteredCluster;
import io.agentbox.worker.image.RegistryAuth;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /internal/clusters}: register (the token is in that response only), list, get, remove,
 * rotate the token, and read or replace the config pushed to the cluster's worker. Registry
 * credentials in the config ({@code settings["registry.auth.HOST"]}, see {@link RegistryAuth}) are
 * never answered with their password.
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
        ManagementBodies.NewCluster b = call.body(ManagementBodies.NewCluster.class);
        if (RESERVED_ID.equals(b.id())) {
            throw ManagementBodies.bad("cluster id '" + RESERVED_ID + "' is reserved");
        }
        return Reply.json(201, withToken(clusters.register(b.id(), b.description() == null ? "" : b.description())));
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
        ManagementBodies.ClusterConfig b = call.body(ManagementBodies.ClusterConfig.class);
        String id = call.param("id");
        if (b.clusterId() != null && !b.clusterId().equals(id)) {
            throw ManagementBodies.bad("clusterId in the body ('" + b.clusterId() + "') differs from the path ('" + id + "')");
        }
        List<ClusterConfig.HostAlias> aliases = new ArrayList<>();
        for (ManagementBodies.HostAlias a : b.hostAliases()) {
            aliases.add(new ClusterConfig.HostAlias(a.ip(), a.hostnames()));
        }
        Map<String, String> settings = keepPasswords(id, b.settings());
        ClusterRecord r = clusters.setConfig(id, new ClusterConfig(aliases, settings), call.expectedVersion(b.resourceVersion()));
        return Reply.json(200, ManagementJson.config(r));
    }

    /**
     * GET shows registry credentials without their password ({@code {"username":"u"}}); when such a
     * value comes back unchanged in a PUT, the stored password for that registry and username is
     * kept, so read-modify-write works without the client knowing the password.
     */
    private Map<String, String> keepPasswords(String id, Map<String, String> settings) {
        Map<String, String> stored = clusters.get(id).map(c -> c.config().settings()).orElse(Map.of());
        Map<String, String> out = new LinkedHashMap<>(settings);
        out.replaceAll((key, value) -> {
            String before = stored.get(key);
            if (!RegistryAuth.isSetting(key) || before == null) {
                return value;
            }
            JsonNode n;
            try {
                n = Json.MAPPER.readTree(value);
            } catch (IOException e) {
                return value; // the store refuses it with a message that does not quote it
            }
            boolean usernameOnly = n != null && n.isObject() && n.size() == 1 && n.path("username").isTextual();
            return usernameOnly && n.get("username").textValue().equals(RegistryAuth.usernameOf(before)) ? before : value;
        });
        return out;
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
