package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.store.ApiKeyStore;
import io.agentbox.manager.store.CreatedApiKey;
import io.agentbox.manager.store.Team;
import io.agentbox.manager.store.TeamStore;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

/** {@code /internal/api-keys} and {@code /internal/teams}: create, list, revoke; the plaintext key appears only in the create response. */
final class KeyEndpoints {
    private final ApiKeyStore keys;
    private final TeamStore teams;

    KeyEndpoints(ApiKeyStore keys, TeamStore teams) {
        this.keys = keys;
        this.teams = teams;
    }

    List<Route> routes() {
        return List.of(
                new Route("GET", "/internal/api-keys", true, this::list),
                new Route("POST", "/internal/api-keys", true, this::create),
                new Route("GET", "/internal/api-keys/{id}", true, this::get),
                new Route("DELETE", "/internal/api-keys/{id}", true, this::revoke),
                new Route("GET", "/internal/teams", true, this::listTeams),
                new Route("POST", "/internal/teams", true, this::createTeam),
                new Route("DELETE", "/internal/teams/{name}", true, this::deleteTeam));
    }

    private Reply list(Call call) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("apiKeys");
        keys.list(call.query("team")).forEach(k -> items.add(ManagementJson.apiKey(k)));
        return Reply.json(200, out);
    }

    private Reply create(Call call) {
        ManagementBodies.NewApiKey b = call.body(ManagementBodies.NewApiKey.class);
        CreatedApiKey created = keys.create(b.team(), b.role() == null ? Principal.ROLE_USER : b.role(),
                b.name() == null ? "" : b.name(), timestamp("expiresAt", b.expiresAt()));
        ObjectNode out = ManagementJson.apiKey(created.record());
        out.put("key", created.plaintext());
        return Reply.json(201, out);
    }

    private Reply get(Call call) {
        String id = call.param("id");
        return Reply.json(200, ManagementJson.apiKey(keys.byId(id)
                .orElseThrow(() -> ApiException.e2b(404, "API key '" + id + "' not found"))));
    }

    private Reply revoke(Call call) {
        return Reply.json(200, ManagementJson.apiKey(keys.revoke(call.param("id"))));
    }

    private Reply listTeams(Call call) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("teams");
        for (Team t : teams.list()) {
            items.add(ManagementJson.team(t));
        }
        return Reply.json(200, out);
    }

    private Reply createTeam(Call call) {
        ManagementBodies.NewTeam b = call.body(ManagementBodies.NewTeam.class);
        return Reply.json(201, ManagementJson.team(teams.create(b.name(), b.description() == null ? "" : b.description())));
    }

    /** An RFC 3339 timestamp as epoch milliseconds, or null when absent. */
    private static Long timestamp(String field, String value) {
        if (value == null) {
            return null;
        }
        try {
            return Instant.parse(value).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw ManagementBodies.bad(field + " must be an RFC 3339 timestamp such as 2030-01-01T00:00:00Z, got '" + value + "'");
        }
    }

    private Reply deleteTeam(Call call) {
        teams.delete(call.param("name"));
        return Reply.noContent();
    }
}
