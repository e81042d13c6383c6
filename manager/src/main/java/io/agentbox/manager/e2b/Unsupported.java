package io.agentbox.manager.e2b;

import java.util.List;
import java.util.regex.Pattern;

/**
 * E2B control-plane routes we do not implement (docs/e2b-wire.md#unimplemented-routes), each answered with 501
 * and a message saying what to use instead.
 */
final class Unsupported {
    /** One unsupported route family; {@code name} is the metric tag (bounded: one per rule). */
    record Rule(String name, Pattern path, String message) {}

    private static final List<Rule> RULES = List.of(
            rule("logs", "(/v2)?/sandboxes/[^/]+/logs", "sandbox logs are not supported; capture output with commands.run callbacks"),
            rule("metrics", "/sandboxes/metrics", "metrics of several sandboxes at once are not supported; use GET /sandboxes/{id}/metrics per sandbox"),
            rule("network", "/sandboxes/[^/]+/network", "changing a running sandbox's network is not supported; the network is set by its template"),
            rule("templates", "(/v\\d)?/templates(/[^/]+)?|/templates/[^/]+/builds/[^/]+(/logs)?",
                    "legacy template builds (POST /templates, POST /templates/{id}, POST /templates/{id}/builds/{buildID}), "
                    + "template updates (PATCH) and build logs are not supported; build with Template.build "
                    + "(POST /v3/templates, then POST /v2/templates/{id}/builds/{buildID})"),
            rule("volumes", "/volumes(/.*)?", "volumes are not supported; write files with the envd /files API"),
            rule("secrets", "/secrets(/.*)?", "secrets are not supported; pass envVars to POST /v2/sandboxes"),
            rule("admin", "/(teams|api-keys|access-tokens|nodes)(/.*)?", "teams, keys and nodes are administered on the hub, not through the E2B API (the first admin key is in <data dir>/admin-key)"));

    private Unsupported() {}

    private static Rule rule(String name, String regex, String message) {
        return new Rule(name, Pattern.compile(regex), "AgentBox does not support this E2B route: " + message);
    }

    /** Every template route, on an API without template builds (a worker's own API). */
    static final Rule NO_BUILDS = rule("templates", "(/v\\d)?/templates(/.*)?", "template builds are served by the hub's "
            + "API, not by a worker's; GET /templates lists the templates this worker serves");

        /** The unsupported E2B route family {@code path} belongs to, or null when it is not an E2B route. */
    static Rule match(String path) {
        for (Rule r : RULES) {
            if (r.path.matcher(path).matches()) {
                return r;
            }
        }
        return null;
    }
}
