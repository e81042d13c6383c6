package io.agentbox.wsproxy.sync;

import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.CapacityAck;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.ConfigEvent;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.RegisterRequest;
import io.agentbox.protocol.v1.RegisterResponse;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.wsproxy.TunnelRegistry;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * The hub's side of {@code agentbox.v1.SyncService} (see sync.proto): versioned watches of
 * templates, API key hashes and the caller's cluster config, each a snapshot (or a resume from the
 * caller's version) followed by upserts and deletes ({@link WatchStreamer}), and capacity reports
 * with the versions the worker applied. Calls naming a cluster that has no live tunnel are
 * refused with FAILED_PRECONDITION.
 */
public final class SyncServiceImpl extends SyncServiceGrpc.SyncServiceImplBase {
    private final TunnelRegistry registry;
    private final HubWatches watches;

    public SyncServiceImpl(TunnelRegistry registry, HubWatches watches) {
        this.registry = registry;
        this.watches = watches;
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
        new WatchStreamer<>(watches.templates(), t -> true, (ServerCallStreamObserver<TemplateEvent>) response,
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
                }, v -> { }).start();
    }

    @Override
    public void watchApiKeys(WatchRequest request, StreamObserver<ApiKeyEvent> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        new WatchStreamer<>(watches.apiKeys(), k -> true, (ServerCallStreamObserver<ApiKeyEvent>) response,
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
                }, v -> { }).start();
    }

    @Override
    public void watchConfig(WatchRequest request, StreamObserver<ConfigEvent> response) {
        String clusterId = request.getClusterId();
        if (!requireConnected(clusterId, response)) {
            return;
        }
        String prefix = HubWatches.configKey(clusterId, "");
        new WatchStreamer<>(watches.configEntries(), e -> e.getKey().startsWith(prefix),
                (ServerCallStreamObserver<ConfigEvent>) response, request.getResourceVersion(),
                new WatchStreamer.Events<ConfigEntry, ConfigEvent>() {
                    @Override
                    public ConfigEvent snapshot(long version, List<ConfigEntry> items) {
                        return ConfigEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT)
                                .setResourceVersion(version).addAllEntries(items.stream().map(e -> local(e, prefix)).toList())
                                .build();
                    }

                    @Override
                    public ConfigEvent change(WatchCache.Change<ConfigEntry> c) {
                        return ConfigEvent.newBuilder().setType(type(c)).setResourceVersion(c.version())
                                .addEntries(local(c.item(), prefix)).build();
                    }
                }, v -> { }).start();
    }

    /** The worker sees its entries without the cluster prefix. */
    private static ConfigEntry local(ConfigEntry e, String prefix) {
        return e.toBuilder().setKey(e.getKey().substring(prefix.length())).build();
    }

    private static EventType type(WatchCache.Change<?> c) {
        return c.type() == WatchCache.Change.Type.UPSERT ? EventType.EVENT_TYPE_UPSERT : EventType.EVENT_TYPE_DELETE;
    }

    @Override
    public void reportCapacity(CapacityReport request, StreamObserver<CapacityAck> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        registry.report(request.getClusterId(), request.getPoolsList(), request.getAppliedVersionsMap());
        response.onNext(CapacityAck.getDefaultInstance());
        response.onCompleted();
    }

    private boolean requireConnected(String clusterId, StreamObserver<?> response) {
        if (registry.isConnected(clusterId)) {
            return true;
        }
        response.onError(Status.FAILED_PRECONDITION
                .withDescription("cluster '" + clusterId + "' has no open tunnel").asRuntimeException());
        return false;
    }
}
