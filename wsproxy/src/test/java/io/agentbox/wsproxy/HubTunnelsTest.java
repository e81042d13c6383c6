package io.agentbox.wsproxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.grpc.MuxAddress;
import io.agentbox.mux.grpc.MuxGrpc;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.wsproxy.sync.HubWatches;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The hub's tunnel side over a real loopback WebSocket, with a worker-side peer built from mux parts. */
class HubTunnelsTest {
    private static final String TOKEN = "0123456789abcdef0123456789abcdef";
    private static final MuxConfig MUX = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();

    private final HubWatches watches = HubWatches.empty();
    private HubTunnels hub;
    private WebSocketClient client;
    private Server workerServer;

    @BeforeEach
    void start() throws Exception {
        watches.templates().upsert(Template.newBuilder().setName("base").setPoolSize(4).build());
        hub = new HubTunnels("127.0.0.1", 0, new SharedTokenAuthenticator(TOKEN), watches).start();
        client = new WebSocketClient();
        MuxWebSockets.configure(client, MUX);
        client.start();
    }

    @AfterEach
    void stop() throws Exception {
        if (workerServer != null) {
            workerServer.shutdownNow();
        }
        client.stop();
        hub.close();
    }

    private CompletableFuture<MuxSession> dial(String clusterId, String token, MuxAddress workerAddress) throws Exception {
        ClientUpgradeRequest req = new ClientUpgradeRequest(URI.create("ws://127.0.0.1:" + hub.address().getPort() + TunnelProtocol.PATH));
        if (clusterId != null) {
            req.setHeader(TunnelProtocol.CLUSTER_ID_HEADER, clusterId);
        }
        req.setHeader(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + token);
        MuxWebSocketEndpoint endpoint = new MuxWebSocketEndpoint(MuxRole.CLIENT, MUX, MuxGrpc.serverAcceptor(workerAddress));
        CompletableFuture<org.eclipse.jetty.websocket.api.Session> ws = client.connect(endpoint, req);
        return ws.thenCompose(s -> endpoint.session());
    }

    @Test
    void refusesWrongTokenAndMalformedClusterIdBeforeTheUpgrade() {
        MuxAddress addr = new MuxAddress("test-worker-refused", () -> null);
        assertThatThrownBy(() -> dial("c1", "wrong-token-wrong-token", addr).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasMessageContaining("401");
        assertThatThrownBy(() -> dial("Bad_Id", TOKEN, addr).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasMessageContaining("400");
        assertThat(hub.registry().connected()).isEmpty();
    }

    @Test
    void workerSyncsAndHubCallsTheWorkerOverOneTunnel() throws Exception {
        MuxAddress workerAddress = new MuxAddress(TunnelProtocol.workerAddress("c1") + "@test", () -> null);
        workerServer = MuxGrpc.serverBuilder(workerAddress).addService(new SandboxServiceGrpc.SandboxServiceImplBase() {
            @Override
            public void getSandbox(SandboxRef request, StreamObserver<SandboxInfo> response) {
                response.onNext(SandboxInfo.newBuilder().setSandboxId(request.getSandboxId()).setClusterId("c1").build());
                response.onCompleted();
            }
        }).build().start();

        MuxSession session = dial("c1", TOKEN, workerAddress).get(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> hub.registry().isConnected("c1"));

        // worker -> hub: the watch starts with a snapshot and follows changes
        ManagedChannel toHub = MuxGrpc.channelBuilder(new MuxAddress("hub-of-c1", () -> session)).build();
        try {
            LinkedBlockingQueue<TemplateEvent> events = new LinkedBlockingQueue<>();
            SyncServiceGrpc.newStub(toHub).watchTemplates(WatchRequest.newBuilder().setClusterId("c1").build(),
                    new StreamObserver<>() {
                        public void onNext(TemplateEvent e) { events.add(e); }
                        public void onError(Throwable t) {}
                        public void onCompleted() {}
                    });
            TemplateEvent first = events.poll(5, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            assertThat(first.getType()).isEqualTo(EventType.EVENT_TYPE_SNAPSHOT);
            assertThat(first.getTemplatesList()).extracting(Template::getName).containsExactly("base");
            watches.templates().upsert(Template.newBuilder().setName("py").setPoolSize(1).build());
            TemplateEvent second = events.poll(5, TimeUnit.SECONDS);
            assertThat(second).isNotNull();
            assertThat(second.getType()).isEqualTo(EventType.EVENT_TYPE_UPSERT);
            assertThat(second.getResourceVersion()).isGreaterThan(first.getResourceVersion());
            assertThat(second.getTemplatesList()).extracting(Template::getName).containsExactly("py");
            watches.templates().delete("base");
            TemplateEvent third = events.poll(5, TimeUnit.SECONDS);
            assertThat(third.getType()).isEqualTo(EventType.EVENT_TYPE_DELETE);
            assertThat(third.getTemplatesList()).extracting(Template::getName).containsExactly("base");

            SyncServiceGrpc.newBlockingStub(toHub).reportCapacity(CapacityReport.newBuilder().setClusterId("c1")
                    .addPools(PoolCapacity.newBuilder().setTemplate("base").setIdle(3).setCapacity(4))
                    .putAppliedVersions(HubWatches.TEMPLATES, third.getResourceVersion()).build());
            assertThat(hub.registry().get("c1").idle("base")).isEqualTo(3);
            assertThat(hub.registry().get("c1").appliedVersions()).containsEntry(HubWatches.TEMPLATES, third.getResourceVersion());

            // a tunnel cannot act as another cluster (see syncCallsAreBoundToTheTunnelsAuthenticatedCluster)
            assertThatThrownBy(() -> SyncServiceGrpc.newBlockingStub(toHub).reportCapacity(
                    CapacityReport.newBuilder().setClusterId("other").build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .extracting(e -> ((StatusRuntimeException) e).getStatus().getCode())
                    .isEqualTo(Status.Code.PERMISSION_DENIED);

            // hub -> worker over the same session
            SandboxInfo info = SandboxServiceGrpc.newBlockingStub(hub.channel("c1")).withDeadlineAfter(5, TimeUnit.SECONDS)
                    .getSandbox(SandboxRef.newBuilder().setSandboxId("abc").build());
            assertThat(info.getSandboxId()).isEqualTo("abc");
        } finally {
            toHub.shutdownNow();
        }

        // the tunnel drops: the cluster leaves the registry and calls fail fast with UNAVAILABLE
        session.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> !hub.registry().isConnected("c1"));
        assertThatThrownBy(() -> SandboxServiceGrpc.newBlockingStub(hub.channel("c1")).withDeadlineAfter(5, TimeUnit.SECONDS)
                .getSandbox(SandboxRef.newBuilder().setSandboxId("abc").build()))
                .isInstanceOf(StatusRuntimeException.class)
                .extracting(e -> ((StatusRuntimeException) e).getStatus().getCode())
                .isEqualTo(Status.Code.UNAVAILABLE);

        // it comes back: the same channel works again
        dial("c1", TOKEN, workerAddress).get(5, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> hub.registry().isConnected("c1"));
        SandboxInfo again = SandboxServiceGrpc.newBlockingStub(hub.channel("c1")).withWaitForReady()
                .withDeadlineAfter(5, TimeUnit.SECONDS).getSandbox(SandboxRef.newBuilder().setSandboxId("xyz").build());
        assertThat(again.getSandboxId()).isEqualTo("xyz");
    }
}
