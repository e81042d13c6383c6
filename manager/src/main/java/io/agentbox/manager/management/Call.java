package io.agentbox.manager.management;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.JsonBinder;
import java.util.Map;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/** One management request as an endpoint sees it: path parameters, query and a size-limited JSON body. */
final class Call {
    private final Request request;
    private final Map<String, String> params;
    private final int maxBody;

    Call(Request request, Map<String, String> params, int maxBody) {
        this.request = request;
        this.params = params;
        this.maxBody = maxBody;
    }

    /**
     * Reads and drops a body the route does not use ({@link HttpIo#discardBody}), so that a long
     * answer is not cut by a reset when the connection closes with body bytes unread.
     *
     * @return false when it cannot be read to its end (malformed, too long, or held back by
     *     {@code Expect: 100-continue})
     */
    boolean discardBody() {
        return HttpIo.discardBody(request);
    }

    /** A path parameter of the matched route. */
    String param(String name) {
        return params.get(name);
    }

    /** A query parameter, or null. */
    String query(String name) {
        Fields.Field f = HttpIo.query(request).get(name);
        return f == null ? null : f.getValue();
    }

    /**
     * The {@code resourceVersion} a conditional write expects, from the body or the query (either
     * may carry it); null when neither does.
     *
     * @throws ApiException 400 when both carry it with different values
     */
    Long expectedVersion(Long inBody) {
        Long inQuery = queryLong("resourceVersion");
        if (inBody != null && inQuery != null && !inBody.equals(inQuery)) {
            throw ManagementBodies.bad("resourceVersion is " + inBody + " in the body but " + inQuery + " in the query");
        }
        return inBody != null ? inBody : inQuery;
    }

    /** A query parameter that must be a non-negative integer when present; null when absent. */
    Long queryLong(String name) {
        String v = query(name);
        if (v == null || v.isEmpty()) {
            return null;
        }
        try {
            long n = Long.parseLong(v);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // answered below
        }
        throw ApiException.e2b(400, "query parameter " + name + " must be a non-negative integer, got '" + v + "'");
    }

    /**
     * The body bound to the record {@code type} ({@link ManagementBodies}); 413 beyond the limit,
     * 400 when not a JSON object, for a field the record lacks or a value of the wrong type.
     */
    <T> T body(Class<T> type) {
        return JsonBinder.PLAIN.bind(Json.parseObject(HttpIo.readBody(request, maxBody)), type);
    }
}
