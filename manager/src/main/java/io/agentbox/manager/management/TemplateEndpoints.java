package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.management.Route.Reply;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.manager.store.TemplateStore;
import io.agentbox.protocol.v1.Template;
import java.util.List;
import java.util.Set;

/**
 * {@code /internal/templates}: CRUD. {@code PUT} and {@code DELETE} take an optional
 * {@code resourceVersion} (body field / query parameter): when stale the answer is 409.
 */
final class TemplateEndpoints {
    private static final Set<String> FIELDS = Set.of("name", "poolSize", "runtime", "network", "defaultTimeoutSeconds",
            "envVars", "cpuCount", "memoryMb", "diskSizeMb", "clusters", "resourceVersion");

    private final TemplateStore templates;

    TemplateEndpoints(TemplateStore templates) {
        this.templates = templates;
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
        templates.list().forEach(t -> items.add(ManagementJson.template(t)));
        return Reply.json(200, out);
    }

    private Reply create(Call call) {
        BodyFields b = call.body().only(FIELDS);
        if (b.node().has("resourceVersion")) {
            throw BodyFields.bad("resourceVersion is set by the hub; leave it out when creating");
        }
        return Reply.json(201, ManagementJson.template(templates.create(spec(b, b.requiredString("name")), b.strings("clusters"))));
    }

    private Reply get(Call call) {
        String name = call.param("name");
        return Reply.json(200, ManagementJson.template(templates.get(name)
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
        return Reply.json(200, ManagementJson.template(r));
    }

    private Reply delete(Call call) {
        templates.delete(call.param("name"), call.queryLong("resourceVersion"));
        return Reply.noContent();
    }

    /** Negative numbers stay negative here so the store refuses them (the proto fields are unsigned). */
    private static Template spec(BodyFields b, String name) {
        return Template.newBuilder()
                .setName(name)
                .setPoolSize(b.integer("poolSize", 1))
                .setRuntime(b.string("runtime", ""))
                .setNetwork(b.string("network", ""))
                .setDefaultTimeoutSeconds(b.integer("defaultTimeoutSeconds", 300))
                .putAllEnvVars(b.envMap("envVars"))
                .setCpuCount(b.integer("cpuCount", 0))
                .setMemoryMb(b.integer("memoryMb", 0))
                .setDiskSizeMb(b.integer("diskSizeMb", 0))
                .build();
    }
}
