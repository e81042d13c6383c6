package io.agentbox.manager.workerapi;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.HttpServers;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.worker.metrics.WorkerMeters;
import io.agentbox.manager.metrics.JvmMeters;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * A worker's Prometheus registry and its {@code GET /metrics} listener (default port
 * {@value #DEFAULT_PORT}; docs/metrics.md#worker-metrics). Every meter carries the common tag
 * {@code cluster=<cluster id>}. The registry holds the worker's own meters ({@link WorkerMeters})
 * and those of its local public API ({@link WorkerApi}); the worker process also adds the JVM's.
 * It is a registry of its own, apart from the hub's, also when both run in one JVM
 * ({@code agentbox standalone}): two endpoints, no shared series.
 *
 * <p>The listener answers {@code GET /metrics} without authentication (it shows counts, template
 * names and the JVM's figures, nothing a sandbox holds); 404 for other paths, 405 for other methods.
 */
public final class WorkerMetrics implements AutoCloseable {
    /** Default port of a worker's {@code /metrics}. */
    public static final int DEFAULT_PORT = 9005;
    public static final String PATH = "/metrics";
    static final int MAX_THREADS = 8;
    static final long IDLE_TIMEOUT_MS = 30_000;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Stops the JVM meters' GC listener; null without them. */
    private final Runnable jvmStop;
    private volatile Server server;

    private WorkerMetrics(String clusterId, boolean jvm) {
        registry.config().commonTags("cluster", clusterId);
        if (jvm) {
            jvmStop = JvmMeters.bind(registry);
        } else {
            jvmStop = null;
        }
    }

    /**
     * A registry for worker {@code clusterId}, not served yet.
     *
     * @param jvm also the JVM's meters (false when the hub's registry in the same JVM has them)
     */
    public static WorkerMetrics create(String clusterId, boolean jvm) {
        return new WorkerMetrics(clusterId, jvm);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The worker's meters over this registry, for {@code SandboxHost.start}. */
    public WorkerMeters meters() {
        return new WorkerMeters(registry);
    }

    /**
     * Serves {@code GET /metrics} on {@code host:port} (0 = ephemeral, see {@link #port()}).
     *
     * @throws Exception when the port cannot be bound
     * @throws IllegalStateException when it serves already
     */
    public synchronized void serve(String host, int port) throws Exception {
        if (server != null) {
            throw new IllegalStateException("worker metrics are served already on port " + port());
        }
        Server s = HttpServers.create("agentbox-worker-metrics", MAX_THREADS, 1, host, port, IDLE_TIMEOUT_MS);
        s.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                try {
                    if (!PATH.equals(request.getHttpURI().getPath())) {
                        throw ApiException.e2b(404, "only GET " + PATH + " is served here");
                    }
                    if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
                        response.getHeaders().put("Allow", "GET, HEAD");
                        throw ApiException.e2b(405, "use GET on " + PATH);
                    }
                    Reply.bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                            registry.scrape().getBytes(StandardCharsets.UTF_8)).write(response, callback);
                } catch (ApiException e) {
                    HttpIo.json(response, callback, e.status(), e.body());
                }
                return true;
            }
        });
        s.start();
        server = s;
    }

    /** The port {@code /metrics} is served on, or -1 when it is not served. */
    public int port() {
        Server s = server;
        return s == null ? -1 : HttpServers.port(s);
    }

    @Override
    public synchronized void close() {
        try {
            if (server != null) {
                server.stop();
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the worker's metrics listener", e);
        } finally {
            server = null;
            if (jvmStop != null) {
                jvmStop.run();
            }
            registry.close();
        }
    }
}
