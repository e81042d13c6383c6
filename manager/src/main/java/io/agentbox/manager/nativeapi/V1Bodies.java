package io.agentbox.manager.nativeapi;

import java.util.Map;

/**
 * Request bodies of the native routes, bound by {@link io.agentbox.manager.http.JsonBinder#QUOTED}:
 * a field of the wrong type or one not named here is a 400 naming it; null or absent is null.
 */
final class V1Bodies {
    private V1Bodies() {}

    /**
     * {@code POST /v1/sandboxes}: at most one of {@code template}, {@code snapshot} and {@code image}
     * (an OCI reference, served by a template built from it: {@link ImageTemplates}); none: {@code base}.
     */
    record NewSandbox(String template, String snapshot, String image, Long timeoutSeconds, Map<String, String> env,
                      Map<String, String> metadata, String cluster) {
        NewSandbox {
            env = env == null ? Map.of() : env;
            metadata = metadata == null ? Map.of() : metadata;
        }
    }

    /** {@code POST /v1/sandboxes/{id}/timeout} (required) and {@code /resume} (optional). */
    record Timeout(Long timeoutSeconds) {}

    /** {@code POST /v1/sandboxes/{id}/snapshots}: {@code name} {@code alias[:tag]}, absent = unnamed. */
    record NewSnapshot(String name) {}

    /** {@code POST /v1/keys}: {@code team} required; {@code role} {@code user} (default) or {@code admin}; {@code name} free text. */
    record NewKey(String name, String team, String role) {}
}
