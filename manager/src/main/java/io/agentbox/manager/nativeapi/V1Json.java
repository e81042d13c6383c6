package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.protocol.v1.SandboxInfo;
import java.time.Instant;
import java.util.List;

/** The native API's resource shapes (docs/native-api.md#resources): camelCase, RFC 3339 UTC times, sizes in bytes or Mb by name. */
final class V1Json {
    private V1Json() {}

    static String time(long epochMs) {
        return Instant.ofEpochMilli(epochMs).toString();
    }

    /**
     * Sandbox: {@code id, template, cluster, team, state, startedAt, endAt, cpuCount, memoryMb,
     * diskSizeMb, metadata}; the worker's values when it was asked, else the hub's record (sizes 0).
     */
    static ObjectNode sandbox(ControlCore.Sandbox s) {
        SandboxRecord r = s.record();
        SandboxInfo info = s.info();
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", r.sandboxId());
        o.put("template", r.template());
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
}
