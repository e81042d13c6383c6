package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.HttpIo;
import io.agentbox.manager.api.Json;
import io.agentbox.manager.api.Limits;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.api.ApiStore;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;

/**
 * The E2B control plane (e2b-protocol.md §3): authenticates {@code X-API-Key}, routes
 * {@code /sandboxes…} and {@code /v2/sandboxes…} to {@link SandboxesApi}, answers unsupported E2B
 * routes with 501 and anything else with 404. Bodies are JSON objects of at most
 * {@link Limits#controlBody()} bytes (413 beyond, 400 when malformed).
 */
public final class E2bControlHandler {
    public static final String API_KEY_HEADER = "X-API-Key";
    private static final Pattern SANDBOXES = Pattern.compile("(/v2)?/sandboxes/?");
    private static final Pattern CONNECT = Pattern.compile("(/v2)?/sandboxes/([^/]+)/connect");
    private static final Pattern ONE = Pattern.compile("/sandboxes/([^/]+)");
    private static final Pattern TIMEOUT = Pattern.compile("/sandboxes/([^/]+)/timeout");
    private static final Pattern REFRESH = Pattern.compile("/sandboxes/([^/]+)/refreshes");
    /** Counter of requests to unsupported E2B routes, tagged {@code route} (the rule's name) and {@code team}. */
    public static final String UNSUPPORTED_METRIC = "agentbox.e2b.unsupported";
    /**
     * Prometheus text exposition of the public API's meters (needs an API key): an admin key sees
     * every team's, any other key only its own team's ({@link TeamMetrics}).
     */
    public static final String METRICS_PATH = "/agentbox/metrics";

    private final ApiStore store;
    private final SandboxesApi sandboxes;
    private final Limits limits;
    private final PrometheusMeterRegistry meters;

    public E2bControlHandler(ApiStore store, ClusterRouter router, EnvdTokens tokens, Limits limits,
                             PrometheusMeterRegistry meters, TeamQuotas quotas) {
        this.store = store;
        this.sandboxes = new SandboxesApi(store, router, tokens, quotas, meters);
        this.limits = limits;
        this.meters = meters;
    }

    /** Handles the request completely; errors are thrown as {@link ApiException}. */
    public void handle(Request request, Response response, Callback callback) {
        // the raw path: an encoded slash (%2F) stays inside its segment; captures are decoded after matching
        String path = request.getHttpURI().getPath();
        String method = request.getMethod();
        Principal who = authenticate(request);
        if (path.equals("/templates") && "GET".equals(method)) {
            ArrayNode templates = Json.MAPPER.createArrayNode();
            store.templates().forEach(t -> templates.add(E2bJson.template(t)));
            HttpIo.json(response, callback, 200, templates);
            return;
        }
        if (path.equals(METRICS_PATH) && "GET".equals(method)) {
            byte[] text = TeamMetrics.scrape(meters, who);
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
            response.write(true, ByteBuffer.wrap(text), callback);
            return;
        }
        // before the sandbox routes: GET /sandboxes/metrics is E2B's, not a sandbox named "metrics"
        Unsupported.Rule unsupported = Unsupported.match(path);
        if (unsupported != null) {
            meters.counter(UNSUPPORTED_METRIC, "route", unsupported.name(), "team", who.team()).increment();
            throw ApiException.e2b(501, unsupported.message());
        }
        Matcher m;
        if ((m = SANDBOXES.matcher(path)).matches()) {
            if ("POST".equals(method)) {
                HttpIo.json(response, callback, 201, sandboxes.create(who, body(request)));
                return;
            }
            if ("GET".equals(method)) {
                String[] next = new String[1];
                ArrayNode list = sandboxes.list(who, ListQuery.parse(HttpIo.query(request)), next);
                if (next[0] != null) {
                    response.getHeaders().put("X-Next-Token", next[0]);
                }
                HttpIo.json(response, callback, 200, list);
                return;
            }
            throw methodNotAllowed(method, path);
        }
        if ((m = CONNECT.matcher(path)).matches()) {
            requireMethod("POST", method, path);
            HttpIo.json(response, callback, 200, sandboxes.connect(who, segment(m.group(2)), body(request)));
            return;
        }
        if ((m = ONE.matcher(path)).matches()) {
            if ("GET".equals(method)) {
                HttpIo.json(response, callback, 200, sandboxes.detail(who, segment(m.group(1))));
                return;
            }
            if ("DELETE".equals(method)) {
                sandboxes.kill(who, segment(m.group(1)));
                HttpIo.empty(response, callback, 204);
                return;
            }
            throw methodNotAllowed(method, path);
        }
        if ((m = TIMEOUT.matcher(path)).matches()) {
            requireMethod("POST", method, path);
            sandboxes.timeout(who, segment(m.group(1)), body(request));
            HttpIo.empty(response, callback, 204);
            return;
        }
        if ((m = REFRESH.matcher(path)).matches()) {
            requireMethod("POST", method, path);
            sandboxes.refresh(who, segment(m.group(1)), body(request));
            HttpIo.empty(response, callback, 204);
            return;
        }
        throw ApiException.e2b(404, "no route for " + method + " " + path);
    }

    private Principal authenticate(Request request) {
        String key = request.getHeaders().get(API_KEY_HEADER);
        if (key == null || key.isBlank()) {
            throw ApiException.e2b(401, "missing " + API_KEY_HEADER + " header");
        }
        return store.authenticate(key.trim()).orElseThrow(() -> ApiException.e2b(401, "invalid API key"));
    }

    private ObjectNode body(Request request) {
        return Json.parseObject(HttpIo.readBody(request, limits.controlBody()));
    }

    /**
     * A path segment captured from the raw path, percent-decoded (UTF-8): {@code a%2Fb} is the one
     * name {@code a/b}, never two segments.
     *
     * @throws ApiException 400 for a malformed escape
     */
    static String segment(String raw) {
        try {
            return URIUtil.decodePath(raw);
        } catch (IllegalArgumentException e) {
            throw ApiException.e2b(400, "malformed percent escape in path segment '" + raw + "'");
        }
    }

    private static void requireMethod(String expected, String method, String path) {
        if (!expected.equals(method)) {
            throw methodNotAllowed(method, path);
        }
    }

    private static ApiException methodNotAllowed(String method, String path) {
        return ApiException.e2b(405, "method " + method + " not allowed on " + path);
    }
}
