package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.JsonBinder;
import java.util.Map;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * One authenticated native request: the caller, the decoded path parameters, the query, a
 * size-limited JSON body, and the raw exchange for endpoints that stream.
 */
final class V1Call {
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final Principal who;
    private final Map<String, String> params;
    private final int maxBody;
    private Fields query;

    V1Call(Request request, Response response, Callback callback, Principal who, Map<String, String> params, int maxBody) {
        this.request = request;
        this.response = response;
        this.callback = callback;
        this.who = who;
        this.params = params;
        this.maxBody = maxBody;
    }

    Principal who() {
        return who;
    }

    /** A path parameter of the matched route, percent-decoded. */
    String param(String name) {
        String v = params.get(name);
        if (v == null) {
            throw new IllegalArgumentException("route has no parameter " + name);
        }
        return v;
    }

    Fields query() {
        if (query == null) {
            query = HttpIo.query(request);
        }
        return query;
    }

    /** A query parameter, null when absent or empty. */
    String query(String name) {
        String v = query().getValue(name);
        return v == null || v.isEmpty() ? null : v;
    }

    /**
     * A required query parameter (no NUL, no lone surrogate).
     *
     * @throws io.agentbox.manager.http.ApiException 400 when absent
     */
    String requireQuery(String name) {
        String v = query(name);
        if (v == null) {
            throw V1Errors.of(400, "query parameter '" + name + "' is required");
        }
        return InputText.value("query parameter '" + name + "'", v);
    }

    /**
     * An integer query parameter in {@code min..max}; {@code dflt} when absent.
     *
     * @throws io.agentbox.manager.http.ApiException 400 when not an integer in range
     */
    int intQuery(String name, int min, int max, int dflt) {
        String v = query(name);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw V1Errors.of(400, "query parameter '" + name + "' must be an integer between " + min + " and " + max);
    }

    /** The body as a JSON object ({@code {}} when empty); 413 beyond the limit, 400 when not an object. */
    ObjectNode body() {
        return Json.parseObject(HttpIo.readBody(request, maxBody));
    }

    /** The body bound to {@code type}: unknown fields and wrong types are 400s naming the field. */
    <T> T body(Class<T> type) {
        return JsonBinder.QUOTED.bind(body(), type);
    }

    Request request() {
        return request;
    }

    Response response() {
        return response;
    }

    Callback callback() {
        return callback;
    }
}
