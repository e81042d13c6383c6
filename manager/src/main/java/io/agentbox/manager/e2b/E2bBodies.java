package io.agentbox.manager.e2b;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Request bodies of the E2B sandbox routes (docs/e2b-wire.md#sandbox-routes), bound by
 * {@link io.agentbox.manager.http.JsonBinder#QUOTED}: a value of the wrong type is a 400 naming the
 * field; fields we do not read are ignored, as the SDKs send more than we use. A null or absent
 * field is null here; the APIs apply the defaults and the checks of meaning.
 */
final class E2bBodies {
    private E2bBodies() {}

    /**
     * {@code NewSandbox}/{@code NewSandboxV2} (docs/e2b-wire.md#create-body). {@code mcp},
     * {@code volumeMounts}, {@code iam} and most of {@code network} are taken as any JSON only to
     * refuse them when present ({@link CreateFields}).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record NewSandbox(String templateID, Long timeout, Map<String, String> metadata, Map<String, String> envVars,
                      Boolean autoPause, Boolean autoPauseMemory, AutoResume autoResume,
                      @JsonProperty("allow_internet_access") Boolean allowInternetAccess, Network network,
                      JsonNode mcp, JsonNode volumeMounts, JsonNode iam) {
        NewSandbox {
            metadata = metadata == null ? Map.of() : metadata;
            envVars = envVars == null ? Map.of() : envVars;
        }

        /** A body naming only the template and the timeout (null: the template's default), as a fork's creates. */
        static NewSandbox of(String templateID, Long timeout) {
            return new NewSandbox(templateID, timeout, null, null, null, null, null, null, null, null, null, null);
        }
    }

    /** {@code autoResume: {"enabled": bool}}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record AutoResume(Boolean enabled) {}

    /** {@code network}: per-sandbox rules AgentBox refuses, and {@code allowPublicTraffic}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Network(JsonNode allowOut, JsonNode denyOut, JsonNode rules, JsonNode egressProxy, JsonNode maskRequestHost,
                   JsonNode httpsPorts, Boolean allowPublicTraffic) {}

    /** {@code POST /sandboxes/{id}/timeout} {@code {"timeout": s}}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record SetTimeout(Long timeout) {}

    /** {@code POST /sandboxes/{id}/refreshes} {@code {"duration"?: s}}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Refresh(Long duration) {}

    /** {@code POST /sandboxes/{id}/pause} {@code {"memory"?: bool}}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Pause(Boolean memory) {}

    /**
     * {@code connect} {@code {"timeout"?, "memory"?}} and the deprecated {@code resume} {@code {"timeout"?, "memory"?, "autoPause"?}}.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Resume(Long timeout, Boolean memory, Boolean autoPause) {}
}
