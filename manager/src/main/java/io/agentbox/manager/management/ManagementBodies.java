package io.agentbox.manager.management;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import java.util.List;
import java.util.Map;

/**
 * Request bodies of the management API, bound by {@link io.agentbox.manager.http.JsonBinder#PLAIN}:
 * a field the body does not have, or a value of the wrong type, is a 400 naming the field, so typos
 * fail loudly instead of being ignored. Each record checks its text as it is made: strings and map
 * keys follow {@link InputText}'s label rule, map values its value rule, environment variables
 * {@link InputText#env}. Absent and null fields are null; the endpoints apply defaults.
 */
final class ManagementBodies {
    private ManagementBodies() {}

    /** {@code POST /internal/api-keys}. */
    record NewApiKey(String team, String role, String name, String expiresAt) {
        NewApiKey {
            team = required("team", team);
            role = InputText.label("role", role);
            name = InputText.label("name", name);
            expiresAt = InputText.label("expiresAt", expiresAt);
        }
    }

    /** {@code POST /internal/teams}. */
    record NewTeam(String name, String description) {
        NewTeam {
            name = required("name", name);
            description = InputText.label("description", description);
        }
    }

    /** {@code POST /internal/clusters}. */
    record NewCluster(String id, String description) {
        NewCluster {
            id = required("id", id);
            description = InputText.label("description", description);
        }
    }

    /** {@code PUT /internal/clusters/{id}/config}. */
    record ClusterConfig(String clusterId, List<HostAlias> hostAliases, Map<String, String> settings,
                         Long resourceVersion) {
        ClusterConfig {
            clusterId = InputText.label("clusterId", clusterId);
            hostAliases = hostAliases == null ? List.of() : hostAliases;
            for (int i = 0; i < hostAliases.size(); i++) {
                if (hostAliases.get(i) == null) {
                    throw bad("hostAliases[" + i + "] must be an object");
                }
            }
            settings = values("settings", settings);
            resourceVersion = nonNegative("resourceVersion", resourceVersion);
        }
    }

    /** One {@code hostAliases} entry: {@code {ip, hostnames}}. */
    record HostAlias(String ip, List<String> hostnames) {
        HostAlias {
            ip = required("ip", ip);
            hostnames = labels("hostnames", hostnames);
        }
    }

    /** {@code PUT /internal/limits} and {@code PUT /internal/teams/{name}/limits}; null = unset. */
    record Limits(Integer maxSandboxes, Double createsPerSecond) {}

    /** {@code PUT /internal/snapshots/{id}}. */
    record SnapshotPool(Integer poolSize) {}

    /** {@code POST /internal/templates} and {@code PUT /internal/templates/{name}}. */
    record Template(String name, Integer poolSize, String runtime, String network, Integer defaultTimeoutSeconds,
                    Map<String, String> envVars, Integer cpuCount, Integer memoryMb, Integer diskSizeMb,
                    List<String> clusters, Long resourceVersion, String image, Integer pidsLimit) {
        Template {
            name = InputText.label("name", name);
            runtime = InputText.label("runtime", runtime);
            network = InputText.label("network", network);
            envVars = InputText.env("envVars", values("envVars", envVars));
            clusters = labels("clusters", clusters);
            resourceVersion = nonNegative("resourceVersion", resourceVersion);
            image = InputText.label("image", image);
        }
    }

    static ApiException bad(String message) {
        return ApiException.e2b(400, message);
    }

    /** {@code value}, a non-empty label. */
    private static String required(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw bad(field + " is required");
        }
        return InputText.label(field, value);
    }

    private static List<String> labels(String field, List<String> values) {
        if (values == null) {
            return List.of();
        }
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i) == null) {
                throw bad(field + "[" + i + "] must be a string");
            }
            InputText.label(field + "[" + i + "]", values.get(i));
        }
        return values;
    }

    /** A map of strings: keys follow the label rule, values the value rule; absent = empty. */
    private static Map<String, String> values(String field, Map<String, String> map) {
        if (map == null) {
            return Map.of();
        }
        map.forEach((k, v) -> {
            String key = InputText.quote(k);
            if (v == null) {
                throw bad(field + "." + key + " must be a string");
            }
            InputText.label(field + " key '" + key + "'", k);
            InputText.value(field + "." + key, v);
        });
        return map;
    }

    private static Long nonNegative(String field, Long value) {
        if (value != null && value < 0) {
            throw bad(field + " must be a non-negative integer");
        }
        return value;
    }
}
