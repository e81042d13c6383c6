package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.api.route.Reply;
import io.agentbox.manager.routing.TemplateReadiness;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.manager.store.TemplateStore;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.TunnelRegistry;
import java.util.List;
import java.util.Set;

/**
 * {@code /internal/templates}: CRUD. {@code PUT} and {@code DELETE} take an optional
 * {@code resourceVersion} (body field / query parameter): when stale the answer is 409. Answers
 * carry {@code status} and {@code statusMessage}: the template's readiness over the connected
 * clusters that run it ({@link TemplateReadiness}).
 */
final class TemplateEndpoints {
    private static final Set<String> FIELDS = Set.of("name", "poolSize", "runtime", "network", "defaultTimeoutSeconds",
            "envVars", "cpuCount", "memoryMb", "diskSizeMb", "clusters", "resourceVersion", "image", "pidsLimit");

    private final TemplateStore templates;
    private final TunnelRegistry tunnels;

    /** @param tunnels the connected clusters, whose capacity reports give each template's {@code status} */
    TemplateEndpoints(TemplateStore templates, TunnelRegistry tunnels) {
        this.templates = templates;
        this.tunnels = tunnels;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/internal/templates", true, this::list),
                new Route("POST", "/internal/templates", true, this::create),
                new Route("GET", "/internal/templates/{name}", true, this::get),
                new Route("PUT", "/internal/templates/{name}", true, this::update),
                new Route("DELETE", "/internal/templates/{name}", true, this::delete));
    }

    private Reply list(Call call) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("templates");
        templates.list().forEach(t -> items.add(withStatus(t)));
        return Reply.json(200, out);
    }

    private Reply create(Call call) {
        BodyFields b = call.body().only(FIELDS);
        if (b.node().has("resourceVersion")) {
            throw BodyFields.bad("resourceVersion is set by the hub; leave it out when creating");
        }
        return Reply.json(201, withStatus(templates.create(spec(b, b.requiredString("name")), b.strings("clusters"))));
    }

    private Reply get(Call call) {
        String name = call.param("name");
        return Reply.json(200, withStatus(templates.get(name)
                .orElseThrow(() -> ApiException.e2b(404, "template '" + name + "' not found"))));
    }

    private Reply update(Call call) {
        String name = call.param("name");
        BodyFields b = call.body().only(FIELDS);
        String bodyName = b.string("name", name);
        if (!bodyName.equals(name)) {
            throw BodyFields.bad("name in the body ('" + bodyName + "') differs from the path ('" + name + "'); templates cannot be renamed");
        }
        TemplateRecord r = templates.update(spec(b, name), b.strings("clusters"), call.expectedVersion(b));
        return Reply.json(200, withStatus(r));
    }

    /** The template with {@code status} and {@code statusMessage} over the clusters that run it (see TemplateReadiness). */
    private ObjectNode withStatus(TemplateRecord r) {
        TemplateReadiness.Status s = TemplateReadiness.of(tunnels, r.name(), r.spec().getImage(), r::targets);
        ObjectNode o = ManagementJson.template(r);
        o.put("status", s.status());
        o.put("statusMessage", s.message());
        return o;
    }

    private Reply delete(Call call) {
        templates.delete(call.param("name"), call.queryLong("resourceVersion"));
        return Reply.noContent();
    }

    /**
     * Negative numbers stay negative here so the store refuses them (the proto fields are unsigned).
     * The store checks and normalises the image reference (400 naming the problem).
     */
    private static Template spec(BodyFields b, String name) {
        int pidsLimit = b.integer("pidsLimit", TemplateStore.DEFAULT_PIDS_LIMIT);
        if (pidsLimit < 1 || pidsLimit > TemplateStore.MAX_PIDS_LIMIT) { // 0 would mean "default" to the store
            throw BodyFields.bad("pidsLimit must be between 1 and " + TemplateStore.MAX_PIDS_LIMIT + ", got " + pidsLimit);
        }
        return Template.newBuilder()
                .setImage(b.string("image", ""))
                .setPidsLimit(pidsLimit)
                .setName(name)
                .setPoolSize(b.integer("poolSize", 1))
                .setRuntime(b.string("runtime", ""))
                .setNetwork(b.string("network", ""))
                .setDefaultTimeoutSeconds(b.integer("defaultTimeoutSeconds", io.agentbox.protocol.SandboxTimeouts.DEFAULT_SECONDS))
                .putAllEnvVars(b.envMap("envVars"))
                .setCpuCount(b.integer("cpuCount", 0))
                .setMemoryMb(b.integer("memoryMb", 0))
                .setDiskSizeMb(b.integer("diskSizeMb", 0))
                .build();
    }
}
