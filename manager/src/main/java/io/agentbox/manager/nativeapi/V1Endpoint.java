package io.agentbox.manager.nativeapi;

import io.agentbox.manager.http.route.Reply;

/**
 * One native route. Answers a {@link Reply}, or null when it answered the request itself (a
 * stream: server-sent events, a download, a WebSocket upgrade) and completes its callback.
 * Errors are thrown ({@link io.agentbox.manager.http.ApiException}, a worker's
 * {@code StatusRuntimeException}) and answered in the envelope of {@link V1Errors}.
 */
@FunctionalInterface
interface V1Endpoint {
    Reply handle(V1Call call) throws Exception;
}
