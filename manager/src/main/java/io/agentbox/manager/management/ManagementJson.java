package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.ApiKeyRecord;
import io.agentbox.manager.store.ClusterConfig;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.Team;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.RegistryAuth;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/** Response shapes of the management API (docs/management-api.openapi.yaml); times are RFC 3339 UTC, null when unset. */
final class ManagementJson {
    private ManagementJson() {}

    static String time(Long epochMs) {
        return epochMs == null ? null : Instant.ofEpochMilli(epochMs).toString();
    }

    static ObjectNode apiKey(ApiKeyRecord k) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", k.id());
        o.put("team", k.team());
        o.put("role", k.role());
        o.put("name", k.name());
        o.put("createdAt", time(k.createdAtMs()));
        o.put("expiresAt", time(k.expiresAtMs()));
        o.put("revokedAt", time(k.revokedAtMs()));
        o.put("resourceVersion", k.resourceVersion());
        return o;
    }

    static ObjectNode team(Team t) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("name", t.name());
        o.put("description", t.description());
        o.put("createdAt", time(t.createdAtMs()));
        o.put("resourceVersion", t.resourceVersion());
        return o;
    }

    static ObjectNode template(TemplateRecord r) {
        Template t = r.spec();
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("name", t.getName());
        o.put("poolSize", t.getPoolSize());
        o.put("runtime", t.getRuntime());
        o.put("network", t.getNetwork());
        o.put("defaultTimeoutSeconds", t.getDefaultTimeoutSeconds());
        putStrings(o.putObject("envVars"), t.getEnvVarsMap());
        o.put("cpuCount", t.getCpuCount());
        o.put("memoryMb", t.getMemoryMb());
        o.put("diskSizeMb", t.getDiskSizeMb());
        o.put("image", t.getImage());
        o.put("pidsLimit", t.getPidsLimit());
        if (!t.getSnapshot().isEmpty()) {
            o.put("snapshot", t.getSnapshot()); // serves a snapshot: change it through /internal/snapshots
        }
        ArrayNode clusters = o.putArray("clusters");
        r.clusters().forEach(clusters::add);
        o.put("createdAt", time(r.createdAtMs()));
        o.put("updatedAt", time(r.updatedAtMs()));
        o.put("resourceVersion", r.resourceVersion());
        return o;
    }

    static ObjectNode cluster(ClusterRecord c) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", c.id());
        o.put("description", c.description());
        o.put("createdAt", time(c.createdAtMs()));
        o.put("resourceVersion", c.resourceVersion());
        return o;
    }

    static ObjectNode config(ClusterRecord c) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("clusterId", c.id());
        ArrayNode aliases = o.putArray("hostAliases");
        for (ClusterConfig.HostAlias a : c.config().hostAliases()) {
            ObjectNode alias = aliases.addObject();
            alias.put("ip", a.ip());
            ArrayNode names = alias.putArray("hostnames");
            a.hostnames().forEach(names::add);
        }
        putStrings(o.putObject("settings"), redacted(c.config().settings()));
        o.put("resourceVersion", c.configVersion());
        return o;
    }

    /** Registry credentials without their passwords: {@code {"username":"u"}}. */
    static Map<String, String> redacted(Map<String, String> settings) {
        Map<String, String> out = new TreeMap<>(settings);
        out.replaceAll((k, v) -> {
            if (!RegistryAuth.isSetting(k)) {
                return v;
            }
            String user = RegistryAuth.usernameOf(v);
            return user == null ? "{}" : Json.MAPPER.createObjectNode().put("username", user).toString();
        });
        return out;
    }

    private static void putStrings(ObjectNode target, Map<String, String> map) {
        new TreeMap<>(map).forEach(target::put);
    }
}
