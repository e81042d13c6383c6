package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.Template;
import java.time.Instant;
import java.util.Map;

/**
 * E2B control-plane response shapes (docs/e2b-wire.md#response-shapes); field names are exact and every
 * required field is always present (the Python SDK rejects responses missing one).
 */
final class E2bJson {
    /** envd version we report: gates the SDK features we implement (docs/e2b-wire.md#envd-version: default user, closeStdin, octet-stream upload). */
    static final String ENVD_VERSION = "0.5.7";

    private E2bJson() {}

    /** {@code Sandbox} (create/connect): templateID, sandboxID, clientID, envdVersion, envdAccessToken, alias, domain=null. */
    static ObjectNode sandbox(SandboxRecord r, TemplateLabel template, String accessToken) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", template.templateId());
        o.put("sandboxID", r.sandboxId());
        o.put("clientID", r.clusterId());
        o.put("alias", template.alias());
        o.put("envdVersion", ENVD_VERSION);
        o.put("envdAccessToken", accessToken);
        o.putNull("trafficAccessToken");
        o.putNull("domain");
        return o;
    }

    /**
     * {@code running} or {@code paused}: the worker's word when it was asked ({@code info}), else the
     * hub's record.
     */
    static String state(SandboxRecord r, SandboxInfo info) {
        if (info != null && !info.getState().isEmpty()) {
            return info.getState();
        }
        return r.paused() ? "paused" : "running";
    }

    /** State of a sandbox whose worker cluster is disconnected (not an E2B state: E2B has no such case). */
    static final String UNREACHABLE = "unreachable";

    /**
     * {@code ListedSandbox}: templateID, alias, sandboxID, clientID, startedAt, endAt (RFC 3339),
     * cpuCount, memoryMB, diskSizeMB, state, envdVersion, metadata. {@code info} may be null when
     * the worker could not be asked; the record's values are used then. {@code state} is
     * {@code running}, or {@value #UNREACHABLE} while the sandbox's cluster is disconnected
     * ({@code reachable} false); {@code template} names what it started from.
     */
    static ObjectNode listed(SandboxRecord r, TemplateLabel template, SandboxInfo info, boolean reachable) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", template.templateId());
        o.put("alias", template.alias());
        o.put("sandboxID", r.sandboxId());
        o.put("clientID", r.clusterId());
        o.put("startedAt", Instant.ofEpochMilli(info != null && info.getStartedAtMs() > 0 ? info.getStartedAtMs() : r.createdAtMs()).toString());
        o.put("endAt", Instant.ofEpochMilli(info != null && info.getEndAtMs() > 0 ? info.getEndAtMs() : r.endAtMs()).toString());
        o.put("cpuCount", info == null ? 0 : info.getCpuCount());
        o.put("memoryMB", info == null ? 0 : info.getMemoryMb());
        o.put("diskSizeMB", info == null ? 0 : info.getDiskSizeMb());
        o.put("state", reachable ? state(r, info) : UNREACHABLE);
        o.put("envdVersion", ENVD_VERSION);
        ObjectNode meta = o.putObject("metadata");
        for (Map.Entry<String, String> e : r.metadata().entrySet()) {
            meta.put(e.getKey(), e.getValue());
        }
        return o;
    }

    /**
     * {@code Template} (list templates): templateID, buildID, aliases, names, cpuCount, memoryMB,
     * diskSizeMB, public, buildStatus, envdVersion, plus the counters and times E2B's schema
     * requires (zero / epoch: the hub does not track template builds).
     */
    static ObjectNode template(Template t) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", t.getName());
        o.put("buildID", t.getName());
        o.putArray("aliases").add(t.getName());
        o.putArray("names").add(t.getName());
        o.put("cpuCount", t.getCpuCount());
        o.put("memoryMB", t.getMemoryMb());
        o.put("diskSizeMB", t.getDiskSizeMb());
        o.put("public", false);
        o.put("buildStatus", "ready");
        o.put("envdVersion", ENVD_VERSION);
        o.put("createdAt", Instant.EPOCH.toString());
        o.put("updatedAt", Instant.EPOCH.toString());
        o.putNull("createdBy");
        o.putNull("lastSpawnedAt");
        o.put("spawnCount", 0);
        o.put("buildCount", 0);
        return o;
    }

    /**
     * {@code SandboxDetail} (getInfo): the listed fields plus envdAccessToken, domain=null and
     * {@code lifecycle: {onTimeout: "pause"|"kill", autoResume}} (docs/e2b-wire.md#auto-pause-and-auto-resume).
     */
    static ObjectNode detail(SandboxRecord r, TemplateLabel template, SandboxInfo info, String accessToken) {
        ObjectNode o = listed(r, template, info, info != null);
        o.put("envdAccessToken", accessToken);
        o.putNull("domain");
        ObjectNode lifecycle = o.putObject("lifecycle");
        lifecycle.put("onTimeout", r.lifecycle().autoPause() ? "pause" : "kill");
        lifecycle.put("autoResume", r.lifecycle().autoResume());
        return o;
    }
}
