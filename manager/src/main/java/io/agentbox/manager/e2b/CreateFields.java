package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.store.SandboxLifecycle;
import io.agentbox.protocol.v1.Template;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Fields of E2B's {@code NewSandbox}/{@code NewSandboxV2} (docs/e2b-wire.md#create-body) that AgentBox
 * cannot honour: a create that asks for one gets 400 with what to do instead, rather than a
 * sandbox that silently behaves differently. Fields at their "off" value are accepted, since the
 * SDKs send some of them by default (2.50.0 always sends {@code secure: true} and
 * {@code allow_internet_access: true}).
 */
final class CreateFields {
    private CreateFields() {}

    /** @throws ApiException 400 naming the field and the remedy */
    static void check(E2bBodies.NewSandbox body, Template template) {
        if (present(body.mcp())) {
            throw refuse("mcp", "the MCP gateway is not available; start MCP servers yourself with commands.run");
        }
        if (present(body.volumeMounts())) {
            throw refuse("volumeMounts", "volumes are not available; copy data in with files.write");
        }
        if (present(body.iam())) {
            throw refuse("iam", "IAM tokens are not available; pass credentials as envs");
        }
        E2bBodies.Network network = body.network();
        if (network != null) {
            Map<String, JsonNode> rules = new LinkedHashMap<>();
            rules.put("allowOut", network.allowOut());
            rules.put("denyOut", network.denyOut());
            rules.put("rules", network.rules());
            rules.put("egressProxy", network.egressProxy());
            rules.put("maskRequestHost", network.maskRequestHost());
            rules.put("httpsPorts", network.httpsPorts());
            for (Map.Entry<String, JsonNode> rule : rules.entrySet()) {
                if (present(rule.getValue())) {
                    throw refuse("network." + rule.getKey(), "per-sandbox network rules are not available; the network is set by "
                            + "the template (network 'isolated', 'none' or 'host'; template '" + template.getName() + "' is '"
                            + network(template) + "')");
                }
            }
            if (Boolean.FALSE.equals(network.allowPublicTraffic())) {
                throw refuse("network.allowPublicTraffic", "sandbox ports are reached through the hub with the sandbox "
                        + "id as the capability; traffic tokens are not available");
            }
        }
        if (Boolean.FALSE.equals(body.allowInternetAccess()) && !"none".equals(network(template))) {
            throw refuse("allow_internet_access", "template '" + template.getName() + "' has network '"
                    + network(template) + "', which reaches the internet; use a template with network 'none' "
                    + "(agentbox standalone --sandbox-network none) for sandboxes without internet");
        }
    }

    /**
     * The create-time lifecycle (docs/e2b-wire.md#auto-pause-and-auto-resume): {@code autoPause} (boolean,
     * default false), {@code autoPauseMemory} (boolean, default true), {@code autoResume.enabled}
     * (boolean, default false).
     *
     * @throws ApiException 400 for auto-resume without auto-pause, or auto-resume of a pause that
     *     drops memory (the SDK refuses both too)
     */
    static SandboxLifecycle lifecycle(E2bBodies.NewSandbox body) {
        boolean autoPause = Boolean.TRUE.equals(body.autoPause());
        boolean keepMemory = !Boolean.FALSE.equals(body.autoPauseMemory());
        boolean autoResume = body.autoResume() != null && Boolean.TRUE.equals(body.autoResume().enabled());
        if (autoResume && !autoPause) {
            throw ApiException.e2b(400, "create field 'autoResume' needs 'autoPause': true (only a sandbox paused at its "
                    + "timeout can be resumed by traffic)");
        }
        if (autoResume && !keepMemory) {
            throw ApiException.e2b(400, "create field 'autoResume' cannot be combined with 'autoPauseMemory': false; a "
                    + "pause that drops the processes must be resumed explicitly with connect");
        }
        return new SandboxLifecycle(autoPause, keepMemory, autoResume);
    }

    private static String network(Template t) {
        return t.getNetwork().isEmpty() ? "isolated" : t.getNetwork();
    }

    /** Non-null and not an empty object/array/string. */
    private static boolean present(JsonNode n) {
        return n != null && !n.isNull() && !(n.isContainerNode() && n.isEmpty()) && !(n.isTextual() && n.asText().isEmpty());
    }

    private static ApiException refuse(String field, String remedy) {
        return ApiException.e2b(400, "create field '" + field + "' is not supported: " + remedy);
    }
}
