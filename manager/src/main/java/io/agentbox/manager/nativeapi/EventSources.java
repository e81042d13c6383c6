package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.events.HubEvent;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.SandboxChange;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.TemplateBuildStore;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the events of {@code GET /v1/events} come from, all published to the hub's {@link EventBus}
 * from here (docs/native-api.md#events):
 *
 * <ul>
 *   <li>{@code sandbox {op, sandbox}}: every change of a sandbox record ({@link SandboxChange}, from
 *       the E2B and native routes, the reconciliation with workers, lost clusters); {@code op} is
 *       {@code created}, {@code updated} or {@code deleted}; the sandbox as {@link V1Json#sandbox}
 *       from the record (sizes from its template);
 *   <li>{@code build {templateId, buildId, status}}: every status change of a template build;
 *   <li>{@code cluster {op, cluster}}: a cluster ({@link V1Json#cluster}) whose state changed,
 *       checked every {@value #CLUSTER_POLL_MS} ms while anybody listens (its {@code lastSeenAt}
 *       alone does not count); {@code op} {@code updated}, or {@code deleted} when it is neither
 *       registered nor connected any more. No team's: admins only.
 * </ul>
 */
final class EventSources {
    static final long CLUSTER_POLL_MS = 1000;
    private static final Logger LOG = LoggerFactory.getLogger(EventSources.class);

    private final HubParts hub;
    private final ControlCore core;
    private final EventBus bus;
    // timer thread only
    private final Map<String, JsonNode> clusters = new HashMap<>();

    private EventSources(HubParts hub, ControlCore core) {
        this.hub = hub;
        this.core = core;
        this.bus = hub.events();
    }

    /** Starts publishing the hub's sandbox, build and cluster changes; the cluster checks run on {@code timer}. */
    static void start(HubParts hub, ControlCore core, ScheduledExecutorService timer) {
        EventSources s = new EventSources(hub, core);
        hub.store().sandboxStore().addListener(new SandboxChange.Listener() {
            @Override
            public boolean active() {
                return s.bus.hasSubscribers();
            }

            @Override
            public void changed(SandboxChange c) {
                s.bus.publish(new HubEvent("sandbox", c.record().team(), () -> s.sandbox(c)));
            }
        });
        hub.store().templateBuildStore().addListener(s::build);
        timer.scheduleWithFixedDelay(s::pollClusters, CLUSTER_POLL_MS, CLUSTER_POLL_MS, TimeUnit.MILLISECONDS);
    }

    private JsonNode sandbox(SandboxChange c) {
        SandboxRecord r = c.record();
        ObjectNode s = V1Json.sandbox(new ControlCore.Sandbox(r, null, hub.tunnels().isConnected(r.clusterId())),
                core.labels().apply(r));
        hub.store().template(r.template()).ifPresent(t -> s.put("cpuCount", t.getCpuCount())
                .put("memoryMb", t.getMemoryMb()).put("diskSizeMb", t.getDiskSizeMb()));
        String op = c.op() == SandboxChange.Op.ENDED ? "deleted" : c.op().name().toLowerCase(Locale.ROOT);
        ObjectNode o = Json.MAPPER.createObjectNode().put("op", op);
        o.set("sandbox", s);
        return o;
    }

    private void build(TemplateBuildStore.Build b) {
        if (!bus.hasSubscribers()) {
            return;
        }
        String team = hub.store().templateBuildStore().template(b.templateId())
                .map(TemplateBuildStore.BuiltTemplate::team).orElse(null);
        if (team == null) {
            return; // deleted meanwhile: nobody's to see
        }
        JsonNode data = Json.MAPPER.createObjectNode().put("templateId", b.templateId()).put("buildId", b.buildId())
                .put("status", b.status());
        bus.publish(new HubEvent("build", team, () -> data));
    }

    private void pollClusters() {
        try {
            if (!bus.hasSubscribers()) {
                clusters.clear(); // the next subscriber hears of every cluster first
                return;
            }
            List<ObjectNode> now = AdminEndpoints.clusters(hub, core);
            Set<String> seen = new HashSet<>();
            for (ObjectNode c : now) {
                String id = c.get("id").asText();
                seen.add(id);
                ObjectNode state = c.deepCopy();
                state.remove("lastSeenAt");
                if (!state.equals(clusters.get(id))) {
                    clusters.put(id, state);
                    publishCluster("updated", c);
                }
            }
            for (String gone : new HashSet<>(clusters.keySet())) {
                if (!seen.contains(gone)) {
                    publishCluster("deleted", (ObjectNode) clusters.remove(gone));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot check the clusters for events", e);
        }
    }

    private void publishCluster(String op, ObjectNode cluster) {
        ObjectNode o = Json.MAPPER.createObjectNode().put("op", op);
        o.set("cluster", cluster);
        bus.publish(new HubEvent("cluster", null, () -> o));
    }
}
