package io.agentbox.manager.routing;

import io.grpc.Channel;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * Where sandbox operations go. The hub forwards every sandbox operation to the owning worker
 * over the worker's gRPC services ({@code agentbox.v1.SandboxService}, {@code ProcessService},
 * {@code FilesystemService}, {@code PortService}, {@code TemplateBuildService}, {@code ImageService})
 * on that worker's one channel; the owning
 * cluster of a sandbox is {@code io.agentbox.protocol.SandboxIds.clusterOf(sandboxId)}.
 *
 * <p>Implementations: the tunnel-backed router (one channel per connected worker) and in-process
 * routers in tests. Must be thread-safe.
 */
public interface ClusterRouter {
    /** gRPC channel to the connected worker of this cluster, or null when the cluster is not connected. */
    Channel channel(String clusterId);

    /** Cluster to place a new sandbox of this template on, or null when no worker is connected. */
    String pickCluster(String template);

    /**
     * Why a create of {@code template} cannot be served now because no eligible cluster reports
     * its image ready ({@code template 'T' is not ready: pulling IMAGE on cluster C: progress}),
     * or null when some cluster is ready or none has reported the template yet (the worker then
     * answers itself).
     *
     * @param image the template's image, for the message; may be empty
     * @param onlyCluster the one cluster the create is pinned to, or null for any
     */
    default String notReady(String template, String image, String onlyCluster) {
        return null;
    }

    /** Ids of the clusters connected now (whose sandboxes a listing asks about); none by default. */
    default Collection<String> connectedClusters() {
        return List.of();
    }

    /** As {@link #pickCluster(String)}, but never one of {@code excluded} (clusters a create already gave up on). */
    default String pickCluster(String template, Set<String> excluded) {
        String c = pickCluster(template);
        return c == null || excluded.contains(c) ? null : c;
    }

    /**
     * How long nothing has been heard from the cluster's worker (over its tunnel), after asking it
     * for a sign of life if it was quiet; {@link Duration#ZERO} when unknown.
     */
    default Duration probeSilence(String clusterId) {
        return Duration.ZERO;
    }
}
