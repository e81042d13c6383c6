package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.SandboxMetric;
import io.agentbox.protocol.v1.SandboxMetricsRequest;
import io.grpc.StatusRuntimeException;
import java.time.Instant;
import org.eclipse.jetty.util.Fields;

/**
 * {@code GET /sandboxes/{id}/metrics?start=&end=} (docs/e2b-wire.md#metrics): the samples
 * the worker took (every 5 s, the newest hour) whose second lies in [start, end], as E2B's
 * {@code SandboxMetric} array, oldest first: {@code timestamp} (RFC 3339), {@code timestampUnix}
 * (s), {@code cpuCount}, {@code cpuUsedPct}, {@code memUsed}, {@code memTotal}, {@code memCache},
 * {@code diskUsed}, {@code diskTotal} (bytes). {@code start}/{@code end} are Unix seconds; absent
 * = since the sandbox started / now. {@code []} for a range with no samples (before the sandbox
 * existed); 404 {@code {code:404}} for an unknown sandbox; 400 for a bound that is not a
 * non-negative integer or a start after the end.
 */
final class MetricsApi {
    private final SandboxesApi sandboxes;
    private final ApiStore store;

    MetricsApi(SandboxesApi sandboxes, ApiStore store) {
        this.sandboxes = sandboxes;
        this.store = store;
    }

    void routes(RouteTable.Builder<E2bEndpoint> routes) {
        routes.add("GET", "/sandboxes/{id}/metrics", c -> Reply.json(200, metrics(c.who(), c.param("id"), c.query())));
    }

    ArrayNode metrics(Principal who, String sandboxId, Fields query) {
        long start = seconds(query, "start");
        long end = seconds(query, "end");
        if (start >= 0 && end >= 0 && start > end) {
            throw ApiException.e2b(400, "query parameter 'start' (" + start + ") is after 'end' (" + end + ")");
        }
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        SandboxMetricsRequest.Builder req = SandboxMetricsRequest.newBuilder().setSandboxId(sandboxId);
        if (start > 0) {
            req.setStartMs(start * 1000);
        }
        if (end >= 0) {
            req.setEndMs(end * 1000 + 999); // the whole second
        }
        ArrayNode out = Json.MAPPER.createArrayNode();
        if (end == 0) {
            return out; // before every sandbox (0 would read as "no bound" on the worker)
        }
        try {
            for (SandboxMetric m : SandboxesApi.blocking(s.channel()).getSandboxMetrics(req.build()).getSamplesList()) {
                out.add(json(m));
            }
        } catch (StatusRuntimeException e) {
            if (E2bErrors.sandboxGone(e)) {
                store.markEnded(sandboxId, "gone");
                throw SandboxesApi.notFound(sandboxId);
            }
            throw E2bErrors.fromWorker(e, "sandbox metrics");
        }
        return out;
    }

    static ObjectNode json(SandboxMetric m) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        long seconds = Math.floorDiv(m.getTimestampMs(), 1000);
        o.put("timestamp", Instant.ofEpochSecond(seconds).toString());
        o.put("timestampUnix", seconds);
        o.put("cpuCount", m.getCpuCount());
        o.put("cpuUsedPct", m.getCpuUsedPct());
        o.put("memUsed", m.getMemUsed());
        o.put("memTotal", m.getMemTotal());
        o.put("memCache", m.getMemCache());
        o.put("diskUsed", m.getDiskUsed());
        o.put("diskTotal", m.getDiskTotal());
        return o;
    }

    /** A bound in Unix seconds; -1 when absent. */
    private static long seconds(Fields query, String name) {
        String v = query.getValue(name);
        if (v == null || v.isEmpty()) {
            return -1;
        }
        try {
            long n = Long.parseLong(v);
            if (n < 0 || n > 1L << 40) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiException.e2b(400, "query parameter '" + name + "' must be a Unix time in seconds (a non-negative integer)");
        }
    }
}
