package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.store.TeamLimitStore;
import io.agentbox.manager.store.TeamLimits;
import java.util.List;

/**
 * Per-team quotas: {@code /internal/limits} (the hub-wide defaults) and
 * {@code /internal/teams/{name}/limits} (one team's own, plus the {@code effective} ones). A
 * {@code PUT} replaces every field: an absent or null field is unset (a team then falls back to
 * the default, an unset default means no limit).
 */
final class LimitEndpoints {
    static final String MAX_SANDBOXES = "maxSandboxes";
    static final String CREATES_PER_SECOND = "createsPerSecond";

    private final TeamLimitStore limits;

    LimitEndpoints(TeamLimitStore limits) {
        this.limits = limits;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/internal/limits", true, call -> Reply.json(200, json(limits.defaults()))),
                new Route("PUT", "/internal/limits", true, call -> Reply.json(200, json(limits.setDefaults(parse(call))))),
                new Route("GET", "/internal/teams/{name}/limits", true, call -> team(limits.get(call.param("name")))),
                new Route("PUT", "/internal/teams/{name}/limits", true,
                        call -> team(limits.set(call.param("name"), parse(call)))));
    }

    private Reply team(TeamLimitStore.Stored s) {
        ObjectNode out = json(s);
        out.put("team", s.team());
        fields(out.putObject("effective"), limits.effective(s.team()));
        return Reply.json(200, out);
    }

    private static TeamLimits parse(Call call) {
        ManagementBodies.Limits b = call.body(ManagementBodies.Limits.class);
        return new TeamLimits(b.maxSandboxes(), b.createsPerSecond()); // the store's ranges: 400 naming the field
    }

    private static ObjectNode json(TeamLimitStore.Stored s) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        fields(out, s.limits());
        out.put("resourceVersion", s.resourceVersion());
        return out;
    }

    private static void fields(ObjectNode out, TeamLimits l) {
        if (l.maxSandboxes() == null) {
            out.putNull(MAX_SANDBOXES);
        } else {
            out.put(MAX_SANDBOXES, l.maxSandboxes());
        }
        if (l.createsPerSecond() == null) {
            out.putNull(CREATES_PER_SECOND);
        } else {
            out.put(CREATES_PER_SECOND, l.createsPerSecond());
        }
    }
}
