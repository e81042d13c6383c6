package io.agentbox.manager.management;

import io.agentbox.manager.http.HttpServers;
import io.agentbox.manager.store.HubStore;
import io.agentbox.wsproxy.TunnelRegistry;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.server.Server;

/**
 * The hub's internal management API (HTTP/1.1, Jetty core; default {@code 127.0.0.1:9004}): API
 * keys, teams and their quotas, templates, clusters and their config, cluster status, {@code /metrics} and
 * {@code /ping}. Described in {@code docs/management-api.md} and
 * {@code docs/management-api.openapi.yaml}.
 *
 * <p>Every route but {@code /ping} needs the manager token. Bodies are JSON
 * objects of at most {@value #MAX_BODY_BYTES} bytes (413 beyond).
 */
public final class ManagementServer implements AutoCloseable {
    /** Default port, as in the reference system. */
    public static final int DEFAULT_PORT = 9004;
    /** Largest request body; the biggest legitimate one is a template or cluster config of a few KiB. */
    public static final int MAX_BODY_BYTES = 256 * 1024;
    static final int MAX_THREADS = 32;
    static final long IDLE_TIMEOUT_MS = 30_000;

    private final Server server;
    private final List<Route> routes;

    /** @param port 0 = ephemeral (see {@link #port()} after {@link #start()}) */
    public ManagementServer(HubStore store, TunnelRegistry tunnels, HubMetrics metrics, String host, int port) {
        this.server = HttpServers.create("agentbox-management", MAX_THREADS, 2, host, port, IDLE_TIMEOUT_MS);
        HttpServers.allowEncodedSlash(server); // snapshot ids hold '/' (acme%2Fsnap%3Av1)
        List<Route> all = new ArrayList<>();
        all.addAll(new StatusEndpoints(store, tunnels, metrics.registry()).routes());
        all.addAll(new KeyEndpoints(store.apiKeyStore(), store.teamStore()).routes());
        all.addAll(new TemplateEndpoints(store.templateStore(), tunnels).routes());
        all.addAll(new SnapshotEndpoints(store.snapshotStore()).routes());
        all.addAll(new ClusterEndpoints(store.clusterStore()).routes());
        all.addAll(new LimitEndpoints(store.teamLimitStore()).routes());
        this.routes = List.copyOf(all);
        server.setHandler(new ManagementHandler(routes, store, metrics.registry(), MAX_BODY_BYTES));
    }

    public void start() throws Exception {
        server.start();
    }

    /** The bound port (after {@link #start()}). */
    public int port() {
        return HttpServers.port(server);
    }

    /** Every route as {@code "METHOD /path/{param}"}, for checking the OpenAPI description against the server. */
    public List<String> routes() {
        return routes.stream().map(r -> r.method() + " " + r.path()).toList();
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the management API", e);
        }
    }
}
