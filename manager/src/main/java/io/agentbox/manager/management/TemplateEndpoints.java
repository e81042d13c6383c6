package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.routing.TemplateReadiness;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.manager.store.TemplateStore;
import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.TunnelRegistry;
import java.util.List;

/**
 * {@code /internal/templates}: CRUD. {@code PUT} and {@code DELETE} take an optional
 * {@code resourceVersion} (body field / query parameter): when stale the answer is 409. Answers
 * carry {@code status} and {@code statusMessage}: the template's readiness over the connected
 * clusters that run it ({@link TemplateReadiness}).
 */
final class TemplateEndpoints {
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
        ManagementBodies.Template b = call.body(ManagementBodies.Template.class);
        if (b.resourceVersion() != null) {
            throw ManagementBodies.bad("resourceVersion is set by the hub; leave it out when creating");
        }
        if (b.name() == null || b.name().isEmpty()) {
            throw ManagementBodies.bad("name is required");
        }
        return Reply.json(201, withStatus(templates.create(spec(b, b.name()), b.clusters())));
    }

    private Reply get(Call call) {
        String name = call.param("name");
        return Reply.json(200, withStatus(templates.get(name)
                .orElseThrow(() -> ApiException.e2b(404, "template '" + name + "' not found"))));
    }

    private Reply update(Call call) {
        String name = call.param("name");
        ManagementBodies.Template b = call.body(ManagementBodies.Template.class);
        if (b.name() != null && !b.name().equals(name)) {
            throw ManagementBodies.bad("name in the body ('" + b.name() + "') differs from the path ('" + name
                    + "'); templates cannot be renamed");
        }
        TemplateRecord r = templates.update(spec(b, name), b.clusters(), call.expectedVersion(b.resourceVersion()));
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
    private static Template spec(ManagementBodies.Template b, String name) {
        int pidsLimit = or(b.pidsLimit(), TemplateStore.DEFAULT_PIDS_LIMIT);
        if (pidsLimit < 1 || pidsLimit > TemplateStore.MAX_PIDS_LIMIT) { // 0 would mean "default" to the store
            throw ManagementBodies.bad("pidsLimit must be between 1 and " + TemplateStore.MAX_PIDS_LIMIT + ", got " + pidsLimit);
        }
        return Template.newBuilder()
                .setImage(or(b.image(), ""))
                .setPidsLimit(pidsLimit)
                .setName(name)
                .setPoolSize(or(b.poolSize(), 1))
                .setRuntime(or(b.runtime(), ""))
                .setNetwork(or(b.network(), ""))
                .setDefaultTimeoutSeconds(or(b.defaultTimeoutSeconds(), SandboxTimeouts.DEFAULT_SECONDS))
                .putAllEnvVars(b.envVars())
                .setCpuCount(or(b.cpuCount(), 0))
                .setMemoryMb(or(b.memoryMb(), 0))
                .setDiskSizeMb(or(b.diskSizeMb(), 0))
                .build();
    }

    private static <T> T or(T value, T dflt) {
        return value == null ? dflt : value;
    }
}
