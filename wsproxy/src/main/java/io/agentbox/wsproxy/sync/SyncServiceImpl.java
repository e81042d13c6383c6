package io.agentbox.wsproxy.sync;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.CapacityAck;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.ClusterConfig;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.ConfigEvent;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.RegisterRequest;
import io.agentbox.protocol.v1.RegisterResponse;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.wsproxy.blobs.BlobStore;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The hub's side of {@code agentbox.v1.SyncService} (see sync.proto): versioned watches of the
 * templates that target the caller's cluster and of API key hashes, each a snapshot (or a resume
 * from the caller's version) followed by upserts and deletes ({@link WatchStreamer}); the caller's
 * cluster config as whole-config events; capacity reports
 * with the versions the worker applied; and reads of the hub's image blobs ({@code ReadBlob}).
 *
 * <p>Every call is bound to the cluster its tunnel authenticated as ({@link TunnelIdentity}, which
 * the server must be built with): a request whose {@code cluster_id} names another cluster is
 * refused with PERMISSION_DENIED (a worker holding cluster A's token cannot watch B's config or
 * report capacity as B), one without a tunnel identity with UNAUTHENTICATED, and one naming a
 * cluster that has no live tunnel with FAILED_PRECONDITION.
 */
public final class SyncServiceImpl extends SyncServiceGrpc.SyncServiceImplBase {
    private final ConnectedClusters registry;
    private final HubWatches watches;
    private final BlobStore blobs;
    /** Blob reads streamed at once; more wait in a queue of {@link #MAX_QUEUED_BLOB_READS}, then RESOURCE_EXHAUSTED. */
    static final int MAX_BLOB_READS = 16;
    static final int MAX_QUEUED_BLOB_READS = 256;
    /** Streams blobs to workers (each read holds a thread and a 1 MiB buffer while it waits on the worker's flow control). */
    private final ThreadPoolExecutor blobReads = new ThreadPoolExecutor(MAX_BLOB_READS, MAX_BLOB_READS, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(MAX_QUEUED_BLOB_READS), DaemonThreads.named("hub-blob-read"));

    {
        blobReads.allowCoreThreadTimeOut(true);
    }

    public SyncServiceImpl(ConnectedClusters registry, HubWatches watches) {
        this(registry, watches, null);
    }

    /** @param blobs the hub's image blobs served by {@code ReadBlob}; null: every read is NOT_FOUND */
    public SyncServiceImpl(ConnectedClusters registry, HubWatches watches, BlobStore blobs) {
        this.registry = registry;
        this.watches = watches;
        this.blobs = blobs;
    }

    /**
     * Streams a blob of the hub's {@link BlobStore} to the worker that asked: any authenticated
     * cluster may read any blob (a digest is known only to clusters the hub gave it to).
     */
    @Override
    public void readBlob(BlobRef request, StreamObserver<BlobChunk> response) {
        if (TunnelIdentity.CLUSTER_ID.get() == null) {
            response.onError(Status.UNAUTHENTICATED
                    .withDescription("sync calls must arrive over an authenticated cluster tunnel").asRuntimeException());
            return;
        }
        BlobStreams.serve(request, response, d -> blobs == null ? null : blobs.path(d).orElse(null), blobReads, "the hub");
    }

    /** Stops the threads that stream blobs. */
    public void shutdown() {
        blobReads.shutdownNow();
    }

    @Override
    public void register(RegisterRequest request, StreamObserver<RegisterResponse> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        response.onNext(RegisterResponse.newBuilder().setClusterId(request.getClusterId()).build());
        response.onCompleted();
    }

    @Override
    public void watchTemplates(WatchRequest request, StreamObserver<TemplateEvent> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        String clusterId = request.getClusterId();
        new WatchStreamer<>(watches.templates(), t -> HubWatches.targets(t, clusterId), true,
                (ServerCallStreamObserver<TemplateEvent>) response,
                request.getResourceVersion(), new WatchStreamer.Events<Template, TemplateEvent>() {
                    @Override
                    public TemplateEvent snapshot(long version, List<Template> items) {
                        return TemplateEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT)
                                .setResourceVersion(version).addAllTemplates(items).build();
                    }

                    @Override
                    public TemplateEvent change(WatchCache.Change<Template> c) {
                        return TemplateEvent.newBuilder().setType(type(c)).setResourceVersion(c.version())
                                .addTemplates(c.item()).build();
                    }
                }).start();
    }

    @Override
    public void watchApiKeys(WatchRequest request, StreamObserver<ApiKeyEvent> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        new WatchStreamer<>(watches.apiKeys(), k -> true, false, (ServerCallStreamObserver<ApiKeyEvent>) response,
                request.getResourceVersion(), new WatchStreamer.Events<ApiKey, ApiKeyEvent>() {
                    @Override
                    public ApiKeyEvent snapshot(long version, List<ApiKey> items) {
                        return ApiKeyEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT)
                                .setResourceVersion(version).addAllKeys(items).build();
                    }

                    @Override
                    public ApiKeyEvent change(WatchCache.Change<ApiKey> c) {
                        return ApiKeyEvent.newBuilder().setType(type(c)).setResourceVersion(c.version())
                                .addKeys(c.item()).build();
                    }
                }).start();
    }

    @Override
    public void watchConfig(WatchRequest request, StreamObserver<ConfigEvent> response) {
        String clusterId = request.getClusterId();
        if (!requireConnected(clusterId, response)) {
            return;
        }
        new WatchStreamer<>(watches.clusterConfigs(), c -> c.getClusterId().equals(clusterId), false,
                (ServerCallStreamObserver<ConfigEvent>) response, request.getResourceVersion(),
                new WatchStreamer.Events<ClusterConfig, ConfigEvent>() {
                    @Override
                    public ConfigEvent snapshot(long version, List<ClusterConfig> items) {
                        return whole(version, items.isEmpty() ? List.of() : items.get(0).getEntriesList());
                    }

                    @Override
                    public ConfigEvent change(WatchCache.Change<ClusterConfig> c) {
                        return whole(c.version(), c.type() == WatchCache.Change.Type.DELETE
                                ? List.of() : c.item().getEntriesList());
                    }
                }).start();
    }

    /** A config event is always the cluster's whole (small) config. */
    private static ConfigEvent whole(long version, List<ConfigEntry> entries) {
        return ConfigEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT).setResourceVersion(version)
                .addAllEntries(entries).build();
    }

    private static EventType type(WatchCache.Change<?> c) {
        return c.type() == WatchCache.Change.Type.UPSERT ? EventType.EVENT_TYPE_UPSERT : EventType.EVENT_TYPE_DELETE;
    }

    @Override
    public void reportCapacity(CapacityReport request, StreamObserver<CapacityAck> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        registry.report(request.getClusterId(), request.getPoolsList(), request.getAppliedVersionsMap(),
                request.getSandboxes());
        response.onNext(CapacityAck.getDefaultInstance());
        response.onCompleted();
    }

    /**
     * True when the call may act as {@code clusterId}: its tunnel authenticated as that cluster and
     * is still connected; otherwise fails {@code response} and returns false.
     */
    private boolean requireConnected(String clusterId, StreamObserver<?> response) {
        String bound = TunnelIdentity.CLUSTER_ID.get();
        if (bound == null) {
            response.onError(Status.UNAUTHENTICATED
                    .withDescription("sync calls must arrive over an authenticated cluster tunnel").asRuntimeException());
            return false;
        }
        if (!bound.equals(clusterId)) {
            response.onError(Status.PERMISSION_DENIED.withDescription("this tunnel is authenticated as cluster '"
                    + bound + "'; it cannot act as cluster '" + clusterId + "'").asRuntimeException());
            return false;
        }
        if (registry.isConnected(clusterId)) {
            return true;
        }
        response.onError(Status.FAILED_PRECONDITION
                .withDescription("cluster '" + clusterId + "' has no open tunnel").asRuntimeException());
        return false;
    }
}
