package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.http.JsonBinder;
import java.util.Map;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/**
 * One authenticated E2B control-plane request as an endpoint sees it: the caller, the decoded path
 * parameters of the matched route, the query and a size-limited JSON body.
 */
public final class E2bCall {
    private final Request request;
    private final Principal who;
    private final Map<String, String> params;
    private final int maxBody;

    E2bCall(Request request, Principal who, Map<String, String> params, int maxBody) {
        this.request = request;
        this.who = who;
        this.params = params;
        this.maxBody = maxBody;
    }

    public Principal who() {
        return who;
    }

    /** A path parameter of the matched route, percent-decoded ({@code a%2Fb} is {@code a/b}). */
    public String param(String name) {
        String v = params.get(name);
        if (v == null) {
            throw new IllegalArgumentException("route has no parameter " + name);
        }
        return v;
    }

    public Fields query() {
        return HttpIo.query(request);
    }

    /**
     * The body as a JSON object; an absent or empty body is {@code {}}.
     *
     * @throws io.agentbox.manager.http.ApiException 413 beyond the limit, 400 when not a JSON object
     */
    public ObjectNode body() {
        return Json.parseObject(HttpIo.readBody(request, maxBody));
    }

    /**
     * The body bound to the record {@code type} ({@link io.agentbox.manager.http.JsonBinder#QUOTED}).
     *
     * @throws io.agentbox.manager.http.ApiException 413 beyond the limit, 400 when not a JSON object
     *     or a field has the wrong type
     */
    public <T> T body(Class<T> type) {
        return JsonBinder.QUOTED.bind(body(), type);
    }

    /** The raw request, for endpoints that stream their body. */
    public Request request() {
        return request;
    }
}
