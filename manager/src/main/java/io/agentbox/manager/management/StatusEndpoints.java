package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.HubStore;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.TunnelRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code /ping} (no token), {@code /metrics} (Prometheus text format; needs the manager token like
 * every other route: it names clusters, routes and store versions) and
 * {@code GET /internal/clusters/status}.
 *
 * <p>Cluster status lists every registered cluster and every connected one (a cluster may connect
 * with the hub's shared token without being registered). Connection data comes from the tunnel
 * registry: {@code connectedSince}, {@code lastSeen} (last capacity report, else the connect time)
 * and {@code pools} (the last capacity report: per template idle, running, capacity, and the
 * image's {@code status} — pulling, ready, error — with its {@code statusMessage}); all are null
 * while the cluster is not connected.
 * {@code acknowledgedResourceVersions} maps each watch ("templates", "api-keys", "config") to the
 * resource version the worker reported as applied in its last capacity report (null while not
 * connected, empty before the first report). A watch's version moves only when that collection
 * changes, so compare it with the version of that collection's last change, not with
 * {@code resourceVersion}.
 */
final class StatusEndpoints {
    private final HubStore store;
    private final TunnelRegistry tunnels;
    private final PrometheusMeterRegistry metrics;

    StatusEndpoints(HubStore store, TunnelRegistry tunnels, PrometheusMeterRegistry metrics) {
        this.store = store;
        this.tunnels = tunnels;
        this.metrics = metrics;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/ping", false, call -> Reply.json(200, Json.MAPPER.createObjectNode().put("status", "ok"))),
                new Route("GET", "/metrics", true, call -> {
                    if (!call.discardBody()) { // the scrape is long: see Call.discardBody
                        throw ApiException.e2b(400, "GET /metrics takes no body, and this one cannot be read to its end");
                    }
                    return Reply.bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                            metrics.scrape().getBytes(StandardCharsets.UTF_8));
                }),
                new Route("GET", "/internal/clusters/status", true, this::clusters));
    }

    private Reply clusters(Call call) {
        Map<String, ClusterRecord> registered = new TreeMap<>();
        store.clusterStore().list().forEach(c -> registered.put(c.id(), c));
        Map<String, ClusterTunnel> connected = new TreeMap<>();
        tunnels.connected().forEach(t -> connected.put(t.clusterId(), t));
        TreeMap<String, Boolean> ids = new TreeMap<>();
        registered.keySet().forEach(id -> ids.put(id, true));
        connected.keySet().forEach(id -> ids.putIfAbsent(id, false));

        ObjectNode out = Json.MAPPER.createObjectNode();
        out.put("resourceVersion", store.changeLog().currentVersion());
        ArrayNode items = out.putArray("clusters");
        ids.forEach((id, isRegistered) -> {
            ClusterTunnel t = connected.get(id);
            ObjectNode o = items.addObject();
            o.put("id", id);
            o.put("registered", isRegistered);
            o.put("connected", t != null);
            o.put("connectedSince", t == null ? null : t.connectedSince().toString());
            o.put("lastSeen", t == null ? null : t.lastSeen().toString());
            o.put("sandboxes", t == null ? null : t.sandboxes());
            if (t == null) {
                o.putNull("acknowledgedResourceVersions");
            } else {
                ObjectNode acked = o.putObject("acknowledgedResourceVersions");
                new TreeMap<>(t.appliedVersions()).forEach(acked::put);
            }
            if (t == null) {
                o.putNull("pools");
            } else {
                ArrayNode pools = o.putArray("pools");
                for (PoolCapacity p : t.pools()) {
                    pools.addObject().put("template", p.getTemplate()).put("idle", p.getIdle())
                            .put("running", p.getRunning()).put("capacity", p.getCapacity())
                            .put("status", PoolReadiness.status(p)).put("statusMessage", p.getStatusMessage());
                }
            }
        });
        return Reply.json(200, out);
    }
}
