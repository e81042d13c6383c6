package io.agentbox.manager.http;

import io.agentbox.worker.metrics.WorkerMeters;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Times every request of the handler it wraps, from its arrival to the end of its response
 * (a Connect stream's whole life for a streaming call), into the timer {@value #NAME}
 * ({@code agentbox_http_server_requests_seconds} in Prometheus) tagged {@code route},
 * {@code method} and {@code status}. Every label is bounded: the route comes from the surface's
 * route table (a template such as {@code /sandboxes/{id}}, never a raw path), methods outside the
 * standard ones are {@code OTHER}, and the status is the response's code (500 when the response
 * failed before it was committed).
 */
public final class RequestMetrics extends Handler.Wrapper {
    /** The timer's name (Micrometer form). */
    public static final String NAME = "agentbox.http.server.requests";
    /** Route label of a request no route matched. */
    public static final String UNMATCHED = "unmatched";
    /** Request attribute a handler sets to the route template it matched ({@link #matched}). */
    private static final String ROUTE_ATTRIBUTE = RequestMetrics.class.getName() + ".route";
    private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

    /** Built once: per request only the tags are looked up. */
    private final Meter.MeterProvider<Timer> requests;
    private final Function<Request, String> routes;

    /**
     * @param routes the route label of a request a handler did not label with {@link #matched} (it
     *     found no route, or it labels none); null or a throw means {@value #UNMATCHED}
     */
    public RequestMetrics(Handler handler, MeterRegistry registry, Function<Request, String> routes) {
        super(handler);
        this.requests = Timer.builder(NAME).description("public API requests, from arrival to the end of the response")
                .serviceLevelObjectives(WorkerMeters.LATENCY_BUCKETS).withRegistry(registry);
        this.routes = routes;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        long start = System.nanoTime();
        String method = METHODS.contains(request.getMethod()) ? request.getMethod() : "OTHER";
        Callback timed = new Callback() {
            @Override
            public void succeeded() {
                record(request, method, response.getStatus(), start);
                callback.succeeded();
            }

            @Override
            public void failed(Throwable failure) {
                record(request, method, response.isCommitted() ? response.getStatus() : 500, start);
                callback.failed(failure);
            }

            @Override
            public InvocationType getInvocationType() {
                return callback.getInvocationType();
            }
        };
        try {
            boolean handled = super.handle(request, response, timed);
            if (!handled) {
                record(request, method, 404, start);
            }
            return handled;
        } catch (Exception | Error e) {
            record(request, method, 500, start);
            throw e;
        }
    }

    /**
     * Labels the request with the route template its handler matched, so that the timer needs no
     * second lookup of the route table.
     */
    public static void matched(Request request, String routeTemplate) {
        request.setAttribute(ROUTE_ATTRIBUTE, routeTemplate);
    }

    private String route(Request request) {
        if (request.getAttribute(ROUTE_ATTRIBUTE) instanceof String matched) {
            return matched;
        }
        try {
            String r = routes.apply(request);
            return r == null ? UNMATCHED : r;
        } catch (RuntimeException e) {
            return UNMATCHED; // a malformed path: the handler answers it
        }
    }

    private void record(Request request, String method, int status, long startNanos) {
        requests.withTags("route", route(request), "method", method.toUpperCase(Locale.ROOT), "status", Integer.toString(status))
                .record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }
}
