package io.agentbox.manager.nativeapi;

import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.RequestIds;
import io.agentbox.manager.http.RequestMetrics;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.store.ApiStore;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.websocket.server.ServerWebSocketContainer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The native REST API under {@code /v1} (docs/native-api.md, docs/native-api.openapi.yaml), served
 * by the hub's public port and by a worker's local API with the same classes.
 *
 * <p>Authentication: {@code Authorization: Bearer <key>} or {@code X-API-Key: <key>} (E2B's keys);
 * a WebSocket upgrade may pass {@code ?apiKey=} since browsers cannot set headers on one. A request
 * without a valid key is 401 before its route is looked up. Then one {@link RouteTable} of
 * {@link V1Endpoint}s: a path with other methods is 405 with {@code Allow}, an unknown path 404.
 *
 * <p>Errors: every status of 400 and above is answered with the envelope of {@link V1Errors},
 * carrying the request's id ({@link RequestIds}); unexpected failures are 500 with the details in
 * the log only.
 */
public final class NativeHandler {
    private static final Logger LOG = LoggerFactory.getLogger(NativeHandler.class);
    /** Prefix of every native path. */
    public static final String PREFIX = "/v1/";

    private final ApiStore store;
    private final int maxBody;
    private final RouteTable<V1Endpoint> routes;

    /**
     * @param maxBody largest JSON request body in bytes (413 beyond)
     * @param families the route families served (sandboxes, commands, files, ...)
     */
    NativeHandler(ApiStore store, int maxBody, List<RouteFamily> families) {
        this.store = store;
        this.maxBody = maxBody;
        RouteTable.Builder<V1Endpoint> table = RouteTable.builder();
        families.forEach(f -> f.routes(table));
        this.routes = table.build();
    }

    /**
     * The native API over the lifecycle core of the E2B surface ({@code core}) and the workers
     * reached through it; {@code timer} sends stream keepalives, {@code webSockets} (the server's
     * container) upgrades terminal connections; {@code hub} serves the admin routes (null on a
     * worker's local API: they answer 501).
     */
    public static NativeHandler create(ApiStore store, ControlCore core, Limits limits, ScheduledExecutorService timer,
                                       ServerWebSocketContainer webSockets, HubParts hub) {
        CatalogEndpoints catalog = new CatalogEndpoints(core);
        return new NativeHandler(store, limits.controlBody(), List.of(new SandboxEndpoints(core, new ImageTemplates(core)),
                new CommandEndpoints(core, timer), new FileEndpoints(core, limits), new PtyEndpoint(core, webSockets),
                catalog, new TemplateEndpoints(core, catalog), new AdminEndpoints(hub, core),
                new EventEndpoints(hub, core, timer)));
    }

    /** A set of routes registered together. */
    interface RouteFamily {
        void routes(RouteTable.Builder<V1Endpoint> table);
    }

    /** Whether {@code request} is for the native API (its path starts with {@value #PREFIX}). */
    public static boolean isNativeRequest(Request request) {
        return request.getHttpURI().getPath().startsWith(PREFIX);
    }

    /** The routes as {@code "METHOD /path"}, for the OpenAPI check. */
    public List<String> routes() {
        return routes.routes().stream().map(r -> r.method() + " " + r.path()).toList();
    }

    /** The route template {@code method rawPath} matches (a metrics label), or null when none does. */
    public String routeLabel(String method, String rawPath) {
        try {
            RouteTable.Lookup<V1Endpoint> found = routes.lookup(method, rawPath);
            return found.found() ? found.route().path() : null;
        } catch (ApiException e) {
            return null;
        }
    }

    /** Handles the request completely, errors included. */
    public void handle(Request request, Response response, Callback callback) {
        try {
            Principal who = authenticate(request);
            String method = request.getMethod();
            String path = request.getHttpURI().getPath();
            RouteTable.Lookup<V1Endpoint> found = routes.lookup(method, path);
            if (!found.found()) {
                if (!found.allowed().isEmpty()) {
                    response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", found.allowed()));
                    throw V1Errors.of(405, "method " + method + " not allowed on " + path + "; allowed: "
                            + String.join(", ", found.allowed()));
                }
                throw V1Errors.of(404, "no route for " + method + " " + path + " (docs/native-api.md lists the routes)");
            }
            RequestMetrics.matched(request, found.route().path());
            V1Call call = new V1Call(request, response, callback, who, found.params(), maxBody);
            Reply reply = found.route().endpoint().handle(call);
            if (reply != null) {
                reply.write(response, callback);
            }
        } catch (ApiException e) {
            fail(request, response, callback, e);
        } catch (StatusRuntimeException e) {
            fail(request, response, callback, V1Errors.fromWorker(e, request.getMethod() + " " + request.getHttpURI().getPath()));
        } catch (Throwable t) {
            LOG.warn("{} {} failed", request.getMethod(), request.getHttpURI().getPath(), t);
            fail(request, response, callback, V1Errors.of(500, "internal error: " + t.getClass().getSimpleName()
                    + " (details in the server's log under request id " + RequestIds.of(request) + ")"));
        }
    }

    /** Answers {@code e} in the envelope (also for streams that fail before their first byte). */
    static void fail(Request request, Response response, Callback callback, ApiException e) {
        HttpIo.error(request, response, callback, e.status(), V1Errors.envelope(e, RequestIds.of(request)),
                RequestIds.HEADER);
    }

    private Principal authenticate(Request request) {
        String key = apiKey(request);
        if (key == null) {
            throw V1Errors.of(401, "missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'");
        }
        return store.authenticate(key).orElseThrow(() -> V1Errors.of(401, "invalid API key"));
    }

    /** The key of {@code Authorization: Bearer}, {@code X-API-Key}, or (WebSocket upgrades only) {@code ?apiKey=}. */
    static String apiKey(Request request) {
        String auth = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7) && !auth.substring(7).isBlank()) {
            return auth.substring(7).trim();
        }
        String key = request.getHeaders().get("X-API-Key");
        if (key != null && !key.isBlank()) {
            return key.trim();
        }
        if ("websocket".equalsIgnoreCase(request.getHeaders().get(HttpHeader.UPGRADE))) {
            String q = HttpIo.query(request).getValue("apiKey");
            return q == null || q.isBlank() ? null : q.trim();
        }
        return null;
    }
}
