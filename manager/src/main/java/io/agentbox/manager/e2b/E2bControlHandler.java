package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.http.RequestMetrics;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.agentbox.manager.store.SnapshotStore;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The E2B control plane (docs/e2b-wire.md#surfaces-and-routing): authenticates {@code X-API-Key}, then dispatches on
 * one {@link RouteTable} of {@link E2bEndpoint}s, matched on the raw path (an encoded slash stays
 * inside its segment). A request that fits no route is answered 501 when its path belongs to an
 * E2B route family we do not implement ({@link Unsupported}), 405 (with {@code Allow}) when other
 * methods fit the path, and 404 otherwise. Bodies are JSON objects of at most {@link Limits#controlBody()} bytes (413
 * beyond, 400 when malformed). Worker errors map through {@link E2bErrors}.
 */
public final class E2bControlHandler {
    public static final String API_KEY_HEADER = "X-API-Key";
    /** Counter of requests to unsupported E2B routes, tagged {@code route} (the rule's name) and {@code team}. */
    public static final String UNSUPPORTED_METRIC = "agentbox.e2b.unsupported";
    /**
     * Prometheus text exposition of the registry the API records into (needs an API key): an admin
     * key sees all of it, any other key only its own team's samples ({@link TeamMetrics}).
     */
    public static final String METRICS_PATH = "/agentbox/metrics";

    private final ApiStore store;
    private final Limits limits;
    private final PrometheusMeterRegistry meters;
    private final RouteTable<E2bEndpoint> routes;
    /**
     * Routes answered without an API key because their URL carries its own signature: only the
     * COPY archive upload of a template build (docs/e2b-wire.md#archive-upload: the SDK's PUT has
     * no key). Matched before authentication, on exact method and path.
     */
    private final RouteTable<E2bEndpoint> signedRoutes;
    private final boolean buildsServed;
    private final ControlCore core;

    public E2bControlHandler(ApiStore store, ClusterRouter router, EnvdTokens tokens, Limits limits,
                             PrometheusMeterRegistry meters, TeamQuotas quotas) {
        this(store, router, tokens, limits, meters, quotas, null);
    }

    /**
     * @param builds the hub's template builds ({@code Template.build}); null where there are none
     *     (the API a worker serves inside its cluster): the template routes then answer 501
     */
    public E2bControlHandler(ApiStore store, ClusterRouter router, EnvdTokens tokens, Limits limits,
                             PrometheusMeterRegistry meters, TeamQuotas quotas, TemplateBuilds builds) {
        this.store = store;
        this.limits = limits;
        this.meters = meters;
        RouteTable.Builder<E2bEndpoint> table = RouteTable.builder();
        RouteTable.Builder<E2bEndpoint> signed = RouteTable.builder();
        // template-like kinds beside the configured templates: built templates, snapshots
        List<TemplateKind> kinds = new ArrayList<>();
        TemplatesApi templates = null;
        if (builds != null) {
            BuiltTemplates built = new BuiltTemplates(builds);
            kinds.add(built);
            templates = new TemplatesApi(store, builds, built);
            templates.routes(table);
            templates.signedRoutes(signed);
        }
        SandboxesApi sandboxes = new SandboxesApi(store, router, tokens, quotas, meters, kinds);
        sandboxes.routes(table);
        SnapshotsApi snapshotsApi = null;
        SnapshotStore snapshotStore = store.snapshots().orElse(null);
        if (snapshotStore != null) {
            snapshotsApi = new SnapshotsApi(snapshotStore, sandboxes, router,
                    builds == null ? null : builds.snapshotCopies(snapshotStore));
            snapshotsApi.routes(table);
            kinds.add(snapshotsApi);
        }
        PauseApi pauseApi = new PauseApi(sandboxes, store, tokens);
        pauseApi.routes(table);
        this.core = new ControlCore(sandboxes, pauseApi, snapshotsApi, snapshotStore, tokens,
                new WorkerSandboxes(store, router), kinds, store, templates);
        new MetricsApi(sandboxes, store).routes(table);
        table.add("DELETE", "/templates/{templateID}", c -> {
            if (store.template(c.param("templateID")).isPresent()) {
                throw ApiException.e2b(400, "template '" + c.param("templateID") + "' is configured on the hub: "
                        + "delete it with the management API (DELETE /internal/templates/{name})");
            }
            for (TemplateKind kind : kinds) {
                if (kind.delete(c.who(), c.param("templateID"))) {
                    return Reply.noContent();
                }
            }
            throw ApiException.e2b(404, "template '" + c.param("templateID") + "' not found");
        });
        TemplatesApi listing = templates;
        table.add("GET", "/templates", c -> {
            ArrayNode list = Json.MAPPER.createArrayNode();
            if (listing != null) {
                listing.list(c.who()).forEach(list::add);
            } else {
                store.templates().forEach(t -> list.add(E2bJson.template(t)));
            }
            return Reply.json(200, list);
        });
        table.add("GET", METRICS_PATH, c -> {
            // the scrape is long: a body left unread would turn the close after it into a reset
            if (!HttpIo.discardBody(c.request())) {
                throw ApiException.e2b(400, "GET " + METRICS_PATH + " takes no body, and this one cannot be read to its end");
            }
            return Reply.bytes(200, "text/plain; version=0.0.4; charset=utf-8", TeamMetrics.scrape(meters, c.who()));
        });
        // literal beats parameter: without this, GET /sandboxes/metrics would look up a sandbox named "metrics"
        table.add("GET", "/sandboxes/metrics", c -> {
            throw unsupported(c.who(), Unsupported.match("/sandboxes/metrics"));
        });
        this.routes = table.build();
        this.signedRoutes = signed.build();
        this.buildsServed = builds != null;
    }

    /** The lifecycle operations behind these routes, for other API surfaces. */
    public ControlCore core() {
        return core;
    }

    /** The routes, for documentation checks. */
    public RouteTable<E2bEndpoint> routes() {
        return routes;
    }

    /** The routes answered without an API key (their URL is signed). */
    public RouteTable<E2bEndpoint> signedRoutes() {
        return signedRoutes;
    }

    /**
     * The template of the route {@code method rawPath} takes ({@code /sandboxes/{id}}), for metric
     * labels; null when none fits or the path is malformed.
     */
    public String routeLabel(String method, String rawPath) {
        try {
            RouteTable.Lookup<E2bEndpoint> found = signedRoutes.lookup(method, rawPath);
            if (!found.found()) {
                found = routes.lookup(method, rawPath);
            }
            return found.found() ? found.route().path() : null;
        } catch (ApiException e) {
            return null;
        }
    }

    /** Handles the request completely; errors are thrown as {@link ApiException}. */
    public void handle(Request request, Response response, Callback callback) {
        String path = request.getHttpURI().getPath();
        String method = request.getMethod();
        RouteTable.Lookup<E2bEndpoint> signed = signedRoutes.lookup(method, path);
        if (signed.found()) {
            RequestMetrics.matched(request, signed.route().path());
            signed.route().endpoint().handle(new E2bCall(request, null, signed.params(), limits.controlBody()))
                    .write(response, callback);
            return;
        }
        Principal who = authenticate(request);
        RouteTable.Lookup<E2bEndpoint> found = routes.lookup(method, path);
        if (!found.found()) {
            Unsupported.Rule rule = !buildsServed && Unsupported.NO_BUILDS.path().matcher(path).matches()
                    ? Unsupported.NO_BUILDS : Unsupported.match(path);
            if (rule != null) { // e.g. POST /templates (a legacy build) beside our GET /templates
                throw unsupported(who, rule);
            }
            if (!found.allowed().isEmpty()) {
                response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", found.allowed()));
                throw ApiException.e2b(405, "method " + method + " not allowed on " + path + "; allowed: " + found.allowed());
            }
            throw ApiException.e2b(404, "no route for " + method + " " + path);
        }
        RequestMetrics.matched(request, found.route().path());
        found.route().endpoint().handle(new E2bCall(request, who, found.params(), limits.controlBody()))
                .write(response, callback);
    }

    private ApiException unsupported(Principal who, Unsupported.Rule rule) {
        meters.counter(UNSUPPORTED_METRIC, "route", rule.name(), "team", who.team()).increment();
        return ApiException.e2b(501, rule.message());
    }

    private Principal authenticate(Request request) {
        String key = request.getHeaders().get(API_KEY_HEADER);
        if (key == null || key.isBlank()) {
            throw ApiException.e2b(401, "missing " + API_KEY_HEADER + " header");
        }
        return store.authenticate(key.trim()).orElseThrow(() -> ApiException.e2b(401, "invalid API key"));
    }
}
