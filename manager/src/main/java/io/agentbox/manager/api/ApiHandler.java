package io.agentbox.manager.api;

import io.agentbox.manager.console.ConsoleHandler;
import io.agentbox.manager.e2b.E2bControlHandler;
import io.agentbox.manager.envd.EnvdHandler;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.RequestIds;
import io.agentbox.manager.nativeapi.NativeHandler;
import io.agentbox.manager.ports.PortProxy;
import io.agentbox.manager.ports.PortRoute;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Root handler of the public port: requests for a sandbox's user port ({@link PortRoute}) go to
 * {@link PortProxy}, envd data-plane requests (sandbox header/host or an envd path,
 * docs/e2b-wire.md#surfaces-and-routing) to {@link EnvdHandler}, paths under {@code /v1/} to the native API
 * ({@link NativeHandler}, which answers its own errors in its envelope), the browser console's files
 * ({@code /console}, hub only) to {@link ConsoleHandler}, everything else to the E2B control plane.
 * Errors become JSON responses with their status; unexpected failures are 500.
 */
final class ApiHandler extends Handler.Abstract {
    private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);

    private final E2bControlHandler control;
    private final EnvdHandler envd;
    private final PortProxy ports;
    private final NativeHandler nativeApi;
    private final ConsoleHandler console;

    /** @param console null where the console is not served (a worker's local API) */
    ApiHandler(E2bControlHandler control, EnvdHandler envd, PortProxy ports, NativeHandler nativeApi,
               ConsoleHandler console) {
        this.control = control;
        this.nativeApi = nativeApi;
        this.envd = envd;
        this.ports = ports;
        this.console = console;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        try {
            PortRoute port = PortRoute.of(request);
            if (port != null) {
                ports.handle(port, request, response, callback);
            } else if (NativeHandler.isNativeRequest(request)) {
                nativeApi.handle(request, response, callback);
            } else if (EnvdHandler.isEnvdRequest(request)) {
                envd.handle(request, response, callback);
            } else if (console != null && ConsoleHandler.isConsoleRequest(request)) {
                console.handle(request, response, callback);
            } else {
                control.handle(request, response, callback);
            }
        } catch (ApiException e) {
            fail(request, response, callback, e);
        } catch (Throwable t) {
            if (clientWentAway(t)) { // a download or stream the client stopped reading: nothing failed here
                LOG.debug("{} {}: the client closed the connection ({})", request.getMethod(),
                        request.getHttpURI().getPath(), t.toString());
                callback.failed(t);
                return true;
            }
            LOG.warn("{} {} failed", request.getMethod(), request.getHttpURI().getPath(), t);
            // details (a store failure's SQL among them) go to the log, not to the client
            fail(request, response, callback, ApiException.e2b(500, "internal error: " + t.getClass().getSimpleName()
                    + " (details in the server's log)"));
        }
        return true;
    }

    /** Whether {@code t} is Jetty's report of a write to a connection the client closed or reset. */
    static boolean clientWentAway(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof EofException) {
                return true;
            }
        }
        return false;
    }

    private static void fail(Request request, Response response, Callback callback, ApiException e) {
        if (response.isCommitted()) {
            callback.failed(e);
            return;
        }
        HttpIo.error(request, response, callback, e.status(), e.body(), RequestIds.HEADER);
    }
}
