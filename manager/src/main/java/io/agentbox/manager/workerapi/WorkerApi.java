package io.agentbox.manager.workerapi;

import io.agentbox.manager.api.ApiServer;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.worker.WorkerAgent;
import io.grpc.Channel;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The public API (E2B control plane and envd data plane, as on the hub) served by a worker for
 * clients inside its cluster, on port {@value #DEFAULT_PORT} by default: keys are checked against
 * the hashes the hub pushed, sandboxes are created on this worker's own pools without a hub round
 * trip, and operations reach its worker services in process. It sees every sandbox of its
 * worker, also those created through the hub (adopted from the worker on first sight, see
 * {@link io.agentbox.manager.sandboxes.WorkerSandboxes}).
 */
public final class WorkerApi implements AutoCloseable {
    /** Default port of the worker-local public API. */
    public static final int DEFAULT_PORT = 8090;

    private final Server grpc;
    private final ManagedChannel channel;
    private final ApiServer api;

    private WorkerApi(Server grpc, ManagedChannel channel, ApiServer api) {
        this.grpc = grpc;
        this.channel = channel;
        this.api = api;
    }

    /**
     * Starts serving on {@code host:port} (0 = ephemeral, see {@link #port()}).
     *
     * @throws Exception when the port cannot be bound
     */
    public static WorkerApi start(WorkerAgent agent, String host, int port) throws Exception {
        return start(agent, host, port, null);
    }

    /** As above; a non-null {@code tls} serves HTTPS with its certificate (reloaded when its files change; the caller closes it). */
    public static WorkerApi start(WorkerAgent agent, String host, int port, ServerTls tls) throws Exception {
        return start(agent, host, port, tls, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    /**
     * As above, recording the API's meters (request latency, creates) into {@code meters}: the
     * worker's registry ({@link WorkerMetrics#registry()}), so that they show on its {@code /metrics}.
     */
    public static WorkerApi start(WorkerAgent agent, String host, int port, ServerTls tls, PrometheusMeterRegistry meters)
            throws Exception {
        String name = "worker-api-" + agent.clusterId() + "-" + UUID.randomUUID();
        InProcessServerBuilder server = InProcessServerBuilder.forName(name);
        agent.host().grpcServices().forEach(server::addService);
        Server grpc = server.build().start();
        ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
        String clusterId = agent.clusterId();
        ClusterRouter router = new ClusterRouter() {
            @Override
            public Channel channel(String cluster) {
                return clusterId.equals(cluster) ? channel : null;
            }

            @Override
            public String pickCluster(String template) {
                return clusterId;
            }

            @Override
            public Collection<String> connectedClusters() {
                return List.of(clusterId);
            }

            @Override
            public String notReady(String template, String image, String onlyCluster) {
                return onlyCluster == null || clusterId.equals(onlyCluster) ? agent.host().pools().notReady(template) : null;
            }
        };
        ApiServer api = new ApiServer(new WorkerApiStore(agent.apiKeys(), agent.templates(), Clock.systemUTC()),
                router, host, port, Limits.DEFAULT, TeamQuotas.NONE, tls, null, meters);
        try {
            api.start();
        } catch (Exception e) {
            channel.shutdownNow();
            grpc.shutdownNow();
            throw e;
        }
        return new WorkerApi(grpc, channel, api);
    }

    public int port() {
        return api.port();
    }

    @Override
    public void close() {
        try {
            api.close();
        } finally {
            channel.shutdownNow();
            grpc.shutdownNow();
            try {
                grpc.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
