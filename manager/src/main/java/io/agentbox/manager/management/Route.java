package io.agentbox.manager.management;

import io.agentbox.manager.http.route.Reply;

/**
 * One management API route: a method, a path template whose {@code {name}} segments match one
 * non-empty path segment (matched by {@link io.agentbox.manager.http.route.RouteTable}), and what
 * answers it.
 *
 * @param method        HTTP method
 * @param path          template, e.g. {@code /internal/templates/{name}} (as written in the OpenAPI file)
 * @param authenticated whether the manager token is required
 * @param endpoint      the handler
 */
record Route(String method, String path, boolean authenticated, Endpoint endpoint) {
    /** Answers a matched request. */
    @FunctionalInterface
    interface Endpoint {
        Reply handle(Call call) throws Exception;
    }
}
