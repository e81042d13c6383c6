package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.store.SandboxLifecycle;
import io.agentbox.protocol.v1.Template;

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
    static void check(ObjectNode body, Template template) {
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

    /**
     * The create-time lifecycle (docs/e2b-wire.md#auto-pause-and-auto-resume): {@code autoPause} (boolean,
     * default false), {@code autoPauseMemory} (boolean, default true), {@code autoResume.enabled}
     * (boolean, default false).
     *
     * @throws ApiException 400 for a field of the wrong type, auto-resume without auto-pause, or
     *     auto-resume of a pause that drops memory (the SDK refuses both too)
     */
    static SandboxLifecycle lifecycle(ObjectNode body) {
        boolean autoPause = bool(body.get("autoPause"), "autoPause", false);
        boolean keepMemory = bool(body.get("autoPauseMemory"), "autoPauseMemory", true);
        JsonNode resume = body.get("autoResume");
        if (resume != null && !resume.isNull() && !resume.isObject()) {
            throw ApiException.e2b(400, "create field 'autoResume' must be an object {\"enabled\": true|false}");
        }
        boolean autoResume = resume != null && resume.isObject() && bool(resume.get("enabled"), "autoResume.enabled", false);
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

    private static boolean bool(JsonNode v, String field, boolean dflt) {
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw ApiException.e2b(400, "create field '" + field + "' must be true or false");
        }
        return v.booleanValue();
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
