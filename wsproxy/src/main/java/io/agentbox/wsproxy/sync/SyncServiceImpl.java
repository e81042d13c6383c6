package io.agentbox.wsproxy.sync;

import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.CapacityAck;
import io.agentbox.protocol.v1.CapacityReport;
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

/**
 * The hub's side of {@code agentbox.v1.SyncService} (see sync.proto). Calls naming a cluster that
 * has no live tunnel are refused with FAILED_PRECONDITION.
 */
public final class SyncServiceImpl extends SyncServiceGrpc.SyncServiceImplBase {
    private final TunnelRegistry registry;
    private final WatchSource<Template> templates;
    private final WatchSource<ApiKey> apiKeys;

    public SyncServiceImpl(TunnelRegistry registry, WatchSource<Template> templates, WatchSource<ApiKey> apiKeys) {
        this.registry = registry;
        this.templates = templates;
        this.apiKeys = apiKeys;
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
        new SnapshotStreamer<>(templates, (ServerCallStreamObserver<TemplateEvent>) response, request.getResourceVersion(),
                (version, items) -> TemplateEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT)
                        .setResourceVersion(version).addAllTemplates(items).build()).start();
    }

    @Override
    public void watchApiKeys(WatchRequest request, StreamObserver<ApiKeyEvent> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        new SnapshotStreamer<>(apiKeys, (ServerCallStreamObserver<ApiKeyEvent>) response, request.getResourceVersion(),
                (version, items) -> ApiKeyEvent.newBuilder().setType(EventType.EVENT_TYPE_SNAPSHOT)
                        .setResourceVersion(version).addAllKeys(items).build()).start();
    }

    @Override
    public void reportCapacity(CapacityReport request, StreamObserver<CapacityAck> response) {
        if (!requireConnected(request.getClusterId(), response)) {
            return;
        }
        registry.report(request.getClusterId(), request.getPoolsList());
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
