package io.agentbox.manager.e2b;

import java.util.List;
import java.util.regex.Pattern;

/**
 * E2B control-plane routes we do not implement (e2b-protocol.md §3.3), each answered with 501
 * and a message saying what to use instead.
 */
final class Unsupported {
    private record Rule(Pattern path, String message) {}

    private static final List<Rule> RULES = List.of(
            rule("/sandboxes/[^/]+/pause", "pausing sandboxes is not supported; a sandbox runs until its timeout or DELETE /sandboxes/{id}"),
            rule("/sandboxes/[^/]+/resume", "resume is not supported (sandboxes are never paused); use POST /v2/sandboxes/{id}/connect"),
            rule("(/v2)?/sandboxes/[^/]+/logs", "sandbox logs are not supported; capture output with commands.run callbacks"),
            rule("/sandboxes(/[^/]+)?/metrics", "sandbox metrics are not supported; read /proc inside the sandbox with commands.run"),
            rule("/sandboxes/[^/]+/network", "changing a running sandbox's network is not supported; the network is set by its template"),
            rule("/sandboxes/[^/]+/(fork|snapshots)", "forks and snapshots are not supported; create a new sandbox instead"),
            rule("/snapshots(/.*)?", "snapshots are not supported; create a new sandbox instead"),
            rule("(/v\\d)?/templates(/.*)?", "templates are configured on the hub (the default template is base); pass an existing templateID to POST /v2/sandboxes"),
            rule("/volumes(/.*)?", "volumes are not supported; write files with the envd /files API"),
            rule("/secrets(/.*)?", "secrets are not supported; pass envVars to POST /v2/sandboxes"),
            rule("/(teams|api-keys|access-tokens|nodes)(/.*)?", "teams, keys and nodes are administered on the hub, not through the E2B API (the first admin key is in <data dir>/admin-key)"));

    private Unsupported() {}

    private static Rule rule(String regex, String message) {
        return new Rule(Pattern.compile(regex), message);
    }

    /** The explanation for an unsupported E2B path, or null when the path is not an E2B route. */
    static String message(String path) {
        for (Rule r : RULES) {
            if (r.path.matcher(path).matches()) {
                return "AgentBox does not support this E2B route: " + r.message;
            }
        }
        return null;
    }
}
