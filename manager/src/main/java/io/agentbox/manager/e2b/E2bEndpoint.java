package io.agentbox.manager.e2b;

import io.agentbox.manager.http.route.Reply;

/**
 * One E2B control-plane route's handler. Errors are thrown as
 * {@link io.agentbox.manager.http.ApiException}s in the E2B shape ({@code {"code", "message"}});
 * worker errors go through {@link E2bErrors}.
 */
@FunctionalInterface
public interface E2bEndpoint {
    Reply handle(E2bCall call);
}
