package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.api.route.Reply;
import io.agentbox.manager.store.TeamLimitStore;
import io.agentbox.manager.store.TeamLimits;
import java.util.List;
import java.util.Set;

/**
 * Per-team quotas: {@code /internal/limits} (the hub-wide defaults) and
 * {@code /internal/teams/{name}/limits} (one team's own, plus the {@code effective} ones). A
 * {@code PUT} replaces every field: an absent or null field is unset (a team then falls back to
 * the default, an unset default means no limit).
 */
final class LimitEndpoints {
    static final String MAX_SANDBOXES = "maxSandboxes";
    static final String CREATES_PER_SECOND = "createsPerSecond";
    private static final Set<String> FIELDS = Set.of(MAX_SANDBOXES, CREATES_PER_SECOND);

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
        BodyFields b = call.body().only(FIELDS);
        JsonNode max = b.node().get(MAX_SANDBOXES);
        Integer maxSandboxes = null;
        if (max != null && !max.isNull()) {
            if (!max.isIntegralNumber() || !max.canConvertToInt()) {
                throw BodyFields.bad(MAX_SANDBOXES + " must be an integer or null");
            }
            maxSandboxes = max.intValue();
        }
        JsonNode rate = b.node().get(CREATES_PER_SECOND);
        Double createsPerSecond = null;
        if (rate != null && !rate.isNull()) {
            if (!rate.isNumber()) {
                throw BodyFields.bad(CREATES_PER_SECOND + " must be a number or null");
            }
            createsPerSecond = rate.doubleValue();
        }
        return new TeamLimits(maxSandboxes, createsPerSecond); // the store's ranges: 400 naming the field
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
