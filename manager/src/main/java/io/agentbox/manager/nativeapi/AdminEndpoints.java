package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.store.ApiKeyRecord;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.CreatedApiKey;
import io.agentbox.wsproxy.ClusterTunnel;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Admin routes of the hub (docs/native-api.md#admin): {@code /v1/clusters} (registered and connected
 * clusters with their last capacity reports) and {@code /v1/keys} (list, create with the key shown
 * once, revoke). A non-admin key is 403; a worker's local API (no {@link HubParts}) answers 501.
 */
final class AdminEndpoints implements NativeHandler.RouteFamily {
    private final HubParts hub;
    private final ControlCore core;

    /** @param hub null on a worker's local API */
    AdminEndpoints(HubParts hub, ControlCore core) {
        this.hub = hub;
        this.core = core;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("GET", "/v1/clusters", c -> Reply.json(200, V1Json.page(clusters(c), null)));
        t.add("GET", "/v1/clusters/{id}", c -> {
            String id = c.param("id");
            return Reply.json(200, clusters(c).stream().filter(o -> o.get("id").asText().equals(id)).findFirst()
                    .orElseThrow(() -> V1Errors.of(404, "cluster '" + id + "' is neither registered nor connected")));
        });
        t.add("GET", "/v1/keys", c -> {
            HubParts h = admin(c);
            String team = c.query("team");
            return Reply.json(200, V1Json.page(h.store().apiKeyStore().list(team == null ? null
                    : InputText.value("query parameter 'team'", team)).stream().map(V1Json::apiKey).toList(), null));
        });
        t.add("POST", "/v1/keys", c -> {
            HubParts h = admin(c);
            V1Bodies.NewKey b = c.body(V1Bodies.NewKey.class);
            if (b.team() == null) {
                throw V1Errors.of(400, "field 'team' is required");
            }
            CreatedApiKey created = V1Errors.store(() -> h.store().apiKeyStore().create(b.team(),
                    b.role() == null ? Principal.ROLE_USER : b.role(), b.name() == null ? "" : b.name(), null));
            return Reply.json(201, V1Json.apiKey(created.record()).put("key", created.plaintext()));
        });
        t.add("DELETE", "/v1/keys/{id}", c -> {
            HubParts h = admin(c);
            V1Errors.store(() -> h.store().apiKeyStore().revoke(c.param("id")));
            return Reply.noContent();
        });
    }

    /** The hub's parts for an admin caller: 403 for other keys, 501 on a worker's local API. */
    private HubParts admin(V1Call c) {
        if (!c.who().isAdmin()) {
            throw V1Errors.of(403, "this route needs an admin API key");
        }
        if (hub == null) {
            throw V1Errors.of(501, "admin routes are served by the hub only, not by a worker's local API");
        }
        return hub;
    }

    private List<ObjectNode> clusters(V1Call c) {
        return clusters(admin(c), core);
    }

    /** Every registered or connected cluster, by id ({@link V1Json#cluster}). */
    static List<ObjectNode> clusters(HubParts h, ControlCore core) {
        Map<String, ClusterRecord> registered = new TreeMap<>();
        h.store().clusterStore().list().forEach(r -> registered.put(r.id(), r));
        Map<String, ClusterTunnel> connected = new TreeMap<>();
        h.tunnels().connected().forEach(tn -> connected.put(tn.clusterId(), tn));
        TreeMap<String, Boolean> ids = new TreeMap<>();
        registered.keySet().forEach(id -> ids.put(id, true));
        connected.keySet().forEach(id -> ids.putIfAbsent(id, false));
        return ids.entrySet().stream()
                .map(e -> V1Json.cluster(e.getKey(), e.getValue(), connected.get(e.getKey()), h.store()::template,
                        name -> core.label(name).alias()))
                .toList();
    }
}
