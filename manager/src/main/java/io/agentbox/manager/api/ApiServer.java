package io.agentbox.manager.api;

import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.console.ConsoleHandler;
import io.agentbox.manager.e2b.E2bControlHandler;
import io.agentbox.manager.envd.EnvdHandler;
import io.agentbox.manager.http.HttpServers;
import io.agentbox.manager.http.JettyTls;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.http.RequestIds;
import io.agentbox.manager.http.RequestMetrics;
import io.agentbox.manager.nativeapi.HubParts;
import io.agentbox.manager.nativeapi.NativeHandler;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.mux.util.DaemonThreads;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.agentbox.manager.ports.PortProxy;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.routing.MdcCalls;
import io.agentbox.mux.tls.ServerTls;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.websocket.server.ServerWebSocketContainer;

/**
 * The hub's public HTTP port (HTTP/1.1, Jetty core): the E2B control plane
 * ({@code /sandboxes}, {@code /v2/sandboxes}, docs/e2b-wire.md#sandbox-routes) and the envd data plane
 * (Connect RPCs, {@code /files}, {@code /health}, docs/e2b-wire.md#surfaces-and-routing) routed by {@code E2b-Sandbox-Id}. Point
 * SDKs at it with {@code E2B_API_URL} and {@code E2B_SANDBOX_URL} both set to {@code http://host:port}.
 */
public final class ApiServer implements AutoCloseable {
    /** Secret name (hub store) for envd access tokens. */
    static final String TOKEN_SECRET = "envd-token-secret";
    static final int MAX_THREADS = 256;
    /** Connection idle timeout; streams are kept alive by keepalive events instead. */
    static final long IDLE_TIMEOUT_MS = 120_000;
    /** How long {@link #close()} waits for the error envelopes of open streams to be written. */
    static final long STREAM_END_GRACE_MS = 300;

    private final Server server;
    private final ScheduledExecutorService timer;
    private final EnvdHandler envd;
    private final NativeHandler nativeApi;
    private final PrometheusMeterRegistry meters;

    /** @param port 0 = ephemeral (see {@link #port()} after {@link #start()}) */
    public ApiServer(ApiStore store, ClusterRouter router, String host, int port) {
        this(store, router, host, port, Limits.DEFAULT);
    }

    public ApiServer(ApiStore store, ClusterRouter router, String host, int port, Limits limits) {
        this(store, router, host, port, limits, TeamQuotas.NONE, null);
    }

    /**
     * @param quotas per-team limits checked on every sandbox create ({@link TeamQuotas#NONE}: none)
     * @param tls    non-null: serve HTTPS with its certificate, reloaded when its files change
     */
    public ApiServer(ApiStore store, ClusterRouter router, String host, int port, Limits limits, TeamQuotas quotas,
                     ServerTls tls) {
        this(store, router, host, port, limits, quotas, tls, null);
    }

    /**
     * As above; {@code builds} serves E2B template builds (the hub's), null for none (a worker's API).
     * The hub's API (builds non-null) also serves the browser console at {@code /console}.
     */
    public ApiServer(ApiStore store, ClusterRouter router, String host, int port, Limits limits, TeamQuotas quotas,
                     ServerTls tls, TemplateBuilds builds) {
        this(store, router, host, port, limits, quotas, tls, builds, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    /**
     * As above, recording into {@code meters} (the process's registry, so that {@code /metrics}
     * shows the API's meters): request latency by route, method and status ({@link RequestMetrics}),
     * sandbox creates per team, create latency.
     */
    public ApiServer(ApiStore store, ClusterRouter router, String host, int port, Limits limits, TeamQuotas quotas,
                     ServerTls tls, TemplateBuilds builds, PrometheusMeterRegistry meters) {
        this(store, router, host, port, limits, quotas, tls, builds, meters, null);
    }

    /** As above; {@code hub} (the hub's store and tunnel registry) serves the native admin routes, null on a worker. */
    public ApiServer(ApiStore store, ClusterRouter router, String host, int port, Limits limits, TeamQuotas quotas,
                     ServerTls tls, TemplateBuilds builds, PrometheusMeterRegistry meters, HubParts hub) {
        this.meters = meters;
        router = MdcCalls.router(router); // the workers' answers are logged with the request's id
        this.server = HttpServers.create("agentbox-api", MAX_THREADS, 8, host, port, IDLE_TIMEOUT_MS,
                tls == null ? null : JettyTls.factory(tls));
        HttpServers.allowEncodedSlash(server);
        this.timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("agentbox-api-keepalive"));
        EnvdTokens tokens = new EnvdTokens(store.secret(TOKEN_SECRET));
        this.envd = new EnvdHandler(store, router, tokens, limits, timer);
        E2bControlHandler control = new E2bControlHandler(store, router, tokens, limits, meters, quotas, builds);
        this.nativeApi = NativeHandler.create(store, control.core(), limits, timer,
                ServerWebSocketContainer.ensure(server), hub);
        server.setHandler(new RequestIds(new RequestMetrics(new ApiHandler(control, envd, new PortProxy(store, router), nativeApi,
                builds == null ? null : new ConsoleHandler()), meters, request -> ApiRouteLabels.of(request, control, nativeApi))));
    }

    /** The hub's meters, served in Prometheus format at {@link E2bControlHandler#METRICS_PATH}. */
    public PrometheusMeterRegistry meters() {
        return meters;
    }

    /** The native {@code /v1} API, for documentation checks. */
    public NativeHandler nativeApi() {
        return nativeApi;
    }

    public void start() throws Exception {
        server.start();
    }

    /** The bound port (after {@link #start()}). */
    public int port() {
        return HttpServers.port(server);
    }

    @Override
    public void close() {
        try {
            if (envd.shutdownStreams() > 0) {
                Thread.sleep(STREAM_END_GRACE_MS); // lets the end-of-stream envelopes reach the clients
            }
            server.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeNow();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop API server", e);
        } finally {
            timer.shutdownNow();
        }
    }

    private void closeNow() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop API server", e);
        } finally {
            timer.shutdownNow();
        }
    }
}
