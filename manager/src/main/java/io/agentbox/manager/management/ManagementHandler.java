package io.agentbox.manager.management;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.StoreException;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dispatches management requests to their {@link Route}: 404 for an unknown path, 405 (with
 * {@code Allow}) for a known path and another method, 401 without the manager token on
 * authenticated routes. Errors are {@code {"code": <status>, "message": ...}}: store failures map
 * INVALID_ARGUMENT 400, NOT_FOUND 404, CONFLICT 409, FAILED 500.
 */
final class ManagementHandler extends Handler.Abstract {
    private static final Logger log = LoggerFactory.getLogger(ManagementHandler.class);
    /** Header carrying the manager token (as in the reference system); {@code Authorization: Bearer} works too. */
    static final String TOKEN_HEADER = "AGENTBOX-MANAGER-TOKEN";

    private final RouteTable<Route> routes;
    private final HubStore store;
    private final MeterRegistry metrics;
    private final int maxBody;

    ManagementHandler(List<Route> routes, HubStore store, MeterRegistry metrics, int maxBody) {
        RouteTable.Builder<Route> table = RouteTable.builder();
        routes.forEach(r -> table.add(r.method(), r.path(), r));
        this.routes = table.build();
        this.store = store;
        this.metrics = metrics;
        this.maxBody = maxBody;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        String routeLabel = "unmatched";
        int status;
        try {
            RouteTable.Lookup<Route> found = routes.lookup(method, path);
            if (!found.found()) {
                if (found.allowed().isEmpty()) {
                    throw ApiException.e2b(404, "no route for " + method + " " + path);
                }
                response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", found.allowed()));
                throw ApiException.e2b(405, "method " + method + " not allowed on " + path + "; allowed: " + found.allowed());
            }
            Route route = found.route().endpoint();
            routeLabel = route.path();
            if (route.authenticated()) {
                authenticate(request);
            }
            Reply reply = route.endpoint().handle(new Call(request, found.params(), maxBody));
            status = reply.status();
            reply.write(response, callback);
        } catch (ApiException e) {
            status = e.status();
            fail(response, callback, e);
        } catch (StoreException e) {
            status = e.httpStatus();
            if (status == 500) {
                log.warn("{} {} failed", method, path, e);
            }
            // a store failure's message holds SQL: that goes to the log, not to the client
            fail(response, callback, ApiException.e2b(status, status == 500
                    ? "internal error: the hub store failed (details in the hub's log)" : e.getMessage()));
        } catch (Throwable t) {
            status = 500;
            log.warn("{} {} failed", method, path, t);
            fail(response, callback, ApiException.e2b(500, "internal error: " + t.getClass().getSimpleName()));
        }
        metrics.counter("agentbox.management.requests", "method", method, "route", routeLabel,
                "status", Integer.toString(status)).increment();
        return true;
    }

    private void authenticate(Request request) {
        String token = request.getHeaders().get(TOKEN_HEADER);
        String auth = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        if (token == null && auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = auth.substring(7).trim();
        }
        if (token == null || token.isBlank()) {
            throw ApiException.e2b(401, "missing manager token: send " + TOKEN_HEADER + " or Authorization: Bearer");
        }
        if (!store.isManagerToken(token.trim())) {
            throw ApiException.e2b(401, "invalid manager token");
        }
    }

    private static void fail(Response response, Callback callback, ApiException e) {
        if (response.isCommitted()) {
            callback.failed(e);
            return;
        }
        String allow = response.getHeaders().get(HttpHeader.ALLOW);
        response.getHeaders().clear();
        if (allow != null) {
            response.getHeaders().put(HttpHeader.ALLOW, allow);
        }
        HttpIo.json(response, callback, e.status(), e.body());
    }
}
