package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.protocol.v1.Template;

/**
 * Fields of E2B's {@code NewSandbox}/{@code NewSandboxV2} (e2b-protocol.md §3.1) that AgentBox
 * cannot honour: a create that asks for one gets 400 with what to do instead, rather than a
 * sandbox that silently behaves differently. Fields at their "off" value are accepted, since the
 * SDKs send some of them by default (2.50.0 always sends {@code secure: true} and
 * {@code allow_internet_access: true}).
 */
final class CreateFields {
    private CreateFields() {}

    /** @throws ApiException 400 naming the field and the remedy */
    static void check(ObjectNode body, Template template) {
        if (body.path("autoPause").asBoolean(false)) {
            throw refuse("autoPause", "sandboxes cannot be paused; they are killed at their timeout. Omit autoPause "
                    + "(or set it to false) and extend the sandbox with setTimeout()");
        }
        if (body.path("autoResume").path("enabled").asBoolean(false)) {
            throw refuse("autoResume", "sandboxes are never paused, so there is nothing to resume; omit autoResume");
        }
        if (present(body.get("mcp"))) {
            throw refuse("mcp", "the MCP gateway is not available; start MCP servers yourself with commands.run");
        }
        if (present(body.get("volumeMounts"))) {
            throw refuse("volumeMounts", "volumes are not available; copy data in with files.write");
        }
        if (present(body.get("iam"))) {
            throw refuse("iam", "IAM tokens are not available; pass credentials as envs");
        }
        JsonNode network = body.get("network");
        if (present(network)) {
            for (String f : new String[] {"allowOut", "denyOut", "rules", "egressProxy", "maskRequestHost", "httpsPorts"}) {
                if (present(network.get(f))) {
                    throw refuse("network." + f, "per-sandbox network rules are not available; the network is set by "
                            + "the template (network 'isolated', 'none' or 'host'; template '" + template.getName() + "' is '"
                            + network(template) + "')");
                }
            }
            if (network.path("allowPublicTraffic").isBoolean() && !network.path("allowPublicTraffic").booleanValue()) {
                throw refuse("network.allowPublicTraffic", "sandbox ports are reached through the hub with the sandbox "
                        + "id as the capability; traffic tokens are not available");
            }
        }
        JsonNode internet = body.get("allow_internet_access");
        if (internet != null && internet.isBoolean() && !internet.booleanValue() && !"none".equals(network(template))) {
            throw refuse("allow_internet_access", "template '" + template.getName() + "' has network '"
                    + network(template) + "', which reaches the internet; use a template with network 'none' "
                    + "(agentbox standalone --sandbox-network none) for sandboxes without internet");
        }
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
