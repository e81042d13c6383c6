package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.e2b.TemplateLabel;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.ApiKeyRecord;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.ClusterTunnel;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/** The native API's resource shapes (docs/native-api.md#resources): camelCase, RFC 3339 UTC times, sizes in bytes or Mb by name. */
final class V1Json {
    private V1Json() {}

    static String time(long epochMs) {
        return Instant.ofEpochMilli(epochMs).toString();
    }

    /**
     * Sandbox: {@code id, template, templateAlias?, cluster, team, state, startedAt, endAt, cpuCount,
     * memoryMb, diskSizeMb, metadata}; the worker's values when it was asked, else the hub's record
     * (sizes 0). {@code template} is the E2B template id ({@code label}), {@code templateAlias} the
     * name E2B reports when it differs (a built template's alias, a snapshot's full id).
     */
    static ObjectNode sandbox(ControlCore.Sandbox s, TemplateLabel label) {
        SandboxRecord r = s.record();
        SandboxInfo info = s.info();
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", r.sandboxId());
        o.put("template", label.templateId());
        if (!label.alias().equals(label.templateId())) {
            o.put("templateAlias", label.alias());
        }
        o.put("cluster", r.clusterId());
        o.put("team", r.team());
        o.put("state", s.state());
        o.put("startedAt", time(info != null && info.getStartedAtMs() > 0 ? info.getStartedAtMs() : r.createdAtMs()));
        o.put("endAt", time(info != null && info.getEndAtMs() > 0 ? info.getEndAtMs() : r.endAtMs()));
        o.put("cpuCount", info == null ? 0 : info.getCpuCount());
        o.put("memoryMb", info == null ? 0 : info.getMemoryMb());
        o.put("diskSizeMb", info == null ? 0 : info.getDiskSizeMb());
        ObjectNode meta = o.putObject("metadata");
        r.metadata().forEach(meta::put);
        return o;
    }

    /** Snapshot: {@code id, names[], team, sourceSandbox, cluster, createdAt}. */
    static ObjectNode snapshot(SnapshotStore.Snap s) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", s.snapshotId());
        ArrayNode names = o.putArray("names");
        s.names().forEach(names::add);
        o.put("team", s.team());
        o.put("sourceSandbox", s.sourceSandbox());
        o.put("cluster", s.clusterId());
        o.put("createdAt", time(s.createdAtMs()));
        return o;
    }

    /** A list page: {@code {"items": [...], "nextCursor": "…" | null}}. */
    static ObjectNode page(List<ObjectNode> items, String nextCursor) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        ArrayNode a = o.putArray("items");
        items.forEach(a::add);
        if (nextCursor == null) {
            o.putNull("nextCursor");
        } else {
            o.put("nextCursor", nextCursor);
        }
        return o;
    }

    /** API key: {@code id, name, team, role, createdAt, expiresAt?, revokedAt?} (never the key or its hash). */
    static ObjectNode apiKey(ApiKeyRecord k) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", k.id());
        o.put("name", k.name());
        o.put("team", k.team());
        o.put("role", k.role());
        o.put("createdAt", time(k.createdAtMs()));
        if (k.expiresAtMs() != null) {
            o.put("expiresAt", time(k.expiresAtMs()));
        }
        if (k.revokedAtMs() != null) {
            o.put("revokedAt", time(k.revokedAtMs()));
        }
        return o;
    }

    /**
     * Cluster: {@code id, registered, connected, connectedSince, lastSeenAt, runtime, pools[], sandboxes,
     * capacity}; the last four from its last capacity report (null, or [] and 0, while not connected).
     * A pool: {@code template, label, idle, running, paused, target (the configured pool size, 0 for others),
     * capacity, pullStatus (pulling|ready|error), pullProgress?}; {@code template} is the hub's name of
     * the pool's template, {@code label} the name users know it by (a built template's alias, a
     * snapshot's id; a configured template's own name). {@code sandboxes} counts the claimed
     * sandboxes of every pool; {@code capacity} is what the cluster holds now plus its free slots,
     * which its pools share (a pool's capacity is its idle and running plus those slots).
     * {@code runtime} is the runtime of the configured templates it reports (local|kubernetes), null
     * when it reports none.
     *
     * @param configured the hub's configured template of a name, if any
     * @param label      the user-facing name of a hub template name
     */
    static ObjectNode cluster(String id, boolean registered, ClusterTunnel t, Function<String, Optional<Template>> configured,
                              Function<String, String> label) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", id);
        o.put("registered", registered);
        o.put("connected", t != null);
        o.put("connectedSince", t == null ? null : t.connectedSince().toString());
        o.put("lastSeenAt", t == null ? null : t.lastSeen().toString());
        ArrayNode pools = o.putArray("pools");
        TreeSet<String> runtimes = new TreeSet<>();
        long held = 0;
        long running = 0;
        long free = Long.MAX_VALUE;
        for (PoolCapacity p : t == null ? List.<PoolCapacity>of() : t.pools()) {
            Optional<Template> tpl = configured.apply(p.getTemplate());
            tpl.ifPresent(x -> runtimes.add(x.getRuntime().isEmpty() ? "local" : x.getRuntime()));
            ObjectNode pool = pools.addObject().put("template", p.getTemplate()).put("label", label.apply(p.getTemplate()))
                    .put("idle", p.getIdle())
                    .put("running", p.getRunning()).put("paused", p.getPaused())
                    .put("target", tpl.map(Template::getPoolSize).orElse(0)).put("capacity", p.getCapacity())
                    .put("pullStatus", PoolReadiness.status(p));
            if (!p.getStatusMessage().isEmpty()) {
                pool.put("pullProgress", p.getStatusMessage());
            }
            held += p.getIdle() + p.getRunning();
            running += p.getRunning();
            free = Math.min(free, Math.max(0, p.getCapacity() - p.getIdle() - p.getRunning()));
        }
        o.put("runtime", runtimes.isEmpty() ? null : runtimes.first());
        o.put("sandboxes", running);
        o.put("capacity", held + (free == Long.MAX_VALUE ? 0 : free));
        return o;
    }
}
