package io.agentbox.manager.nativeapi;

import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.route.RouteTable;
import java.time.Duration;
import org.eclipse.jetty.websocket.server.ServerWebSocketContainer;

/**
 * {@code GET /v1/sandboxes/{id}/pty} (docs/native-api.md#terminal-websocket): a WebSocket upgrade
 * that runs a login shell on a terminal of {@code ?cols=} x {@code ?rows=} (default 80 x 24,
 * each 1..{@value #MAX_SIZE}) as {@code ?user=} ({@link PtySocket}). The sandbox and the key are
 * checked before the upgrade, so those errors are ordinary HTTP errors in the envelope; a request
 * that is not a WebSocket upgrade is 400.
 *
 * <p>Limits: frames and messages up to {@value #MAX_MESSAGE} bytes; a terminal idle for
 * {@link #IDLE_TIMEOUT} (no frame either way) is closed.
 */
final class PtyEndpoint implements NativeHandler.RouteFamily {
    static final int MAX_SIZE = 1000;
    static final int MAX_MESSAGE = 64 * 1024;
    static final Duration IDLE_TIMEOUT = Duration.ofMinutes(30);

    private final ControlCore core;
    private final ServerWebSocketContainer container;

    PtyEndpoint(ControlCore core, ServerWebSocketContainer container) {
        this.core = core;
        this.container = container;
        container.setMaxTextMessageSize(MAX_MESSAGE);
        container.setMaxBinaryMessageSize(MAX_MESSAGE);
        container.setMaxFrameSize(MAX_MESSAGE);
        container.setIdleTimeout(IDLE_TIMEOUT);
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("GET", "/v1/sandboxes/{id}/pty", c -> {
            int cols = c.intQuery("cols", 1, MAX_SIZE, 80);
            int rows = c.intQuery("rows", 1, MAX_SIZE, 24);
            String user = Commands.user(c.query("user"));
            ControlCore.Target target = core.target(SandboxEndpoints.actingFor(core, c.who(), c.param("id")), c.param("id"));
            boolean upgraded = container.upgrade((req, resp, cb) -> new PtySocket(target, cols, rows, user),
                    c.request(), c.response(), c.callback());
            if (!upgraded) {
                throw V1Errors.of(400, "this route is a WebSocket: send a GET with 'Upgrade: websocket'");
            }
            return null;
        });
    }
}
