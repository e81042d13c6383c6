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
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.CapacityReport;
import io.agentbox.protocol.v1.ClusterConfig;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.ConfigEvent;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.RegisterRequest;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.wsproxy.sync.HubWatches;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two clusters, each with its own token, over real loopback tunnels: every sync call is bound to
 * the cluster its tunnel authenticated as, so a worker holding A's token can neither watch B's
 * config nor report capacity as B.
 */
class SyncBindingTest {
    private static final String TOKEN_A = "a-token-a-token-a-token-a-token-0";
    private static final String TOKEN_B = "b-token-b-token-b-token-b-token-0";
    private static final Map<String, String> TOKENS = Map.of("a", TOKEN_A, "b", TOKEN_B);
    private static final MuxConfig MUX = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();

    private final HubWatches watches = HubWatches.empty();
    private HubTunnels hub;
    private WebSocketClient client;
    private ManagedChannel fromA;
    private ManagedChannel fromB;

    @BeforeEach
    void start() throws Exception {
        watches.templates().upsert(Template.newBuilder().setName("base").setPoolSize(2).build());
        watches.clusterConfigs().upsert(config("a", "host-alias/db", "10.0.0.1"));
        watches.clusterConfigs().upsert(config("b", "host-alias/db", "10.9.9.9"));
        hub = new HubTunnels("127.0.0.1", 0, (id, token) -> token.equals(TOKENS.get(id)), watches).start();
        client = new WebSocketClient();
        MuxWebSockets.configure(client, MUX);
        client.start();
        MuxSession a = dial("a", TOKEN_A);
        MuxSession b = dial("b", TOKEN_B);
        await().atMost(Duration.ofSeconds(10)).until(() -> hub.registry().isConnected("a") && hub.registry().isConnected("b"));
        fromA = MuxGrpc.channelBuilder(new MuxAddress("hub-from-a", () -> a)).build();
        fromB = MuxGrpc.channelBuilder(new MuxAddress("hub-from-b", () -> b)).build();
    }

    @AfterEach
    void stop() throws Exception {
        fromA.shutdownNow();
        fromB.shutdownNow();
        client.stop();
        hub.close();
    }

    private MuxSession dial(String clusterId, String token) throws Exception {
        ClientUpgradeRequest req = new ClientUpgradeRequest(URI.create("ws://127.0.0.1:" + hub.address().getPort() + TunnelProtocol.PATH));
        req.setHeader(TunnelProtocol.CLUSTER_ID_HEADER, clusterId);
        req.setHeader(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + token);
        MuxWebSocketEndpoint endpoint = new MuxWebSocketEndpoint(MuxRole.CLIENT, MUX, MuxStreamRefusal.INSTANCE);
        return client.connect(endpoint, req).thenCompose(s -> endpoint.session()).get(10, TimeUnit.SECONDS);
    }

    /** The worker side serves nothing in this test: streams the hub opens are refused. */
    private enum MuxStreamRefusal implements io.agentbox.mux.MuxStreamAcceptor {
        INSTANCE;

        @Override
        public void accept(MuxSession session, io.netty.channel.Channel stream) {
            ((io.agentbox.mux.MuxStreamChannel) stream).reset();
        }
    }

    private static ClusterConfig config(String cluster, String key, String value) {
        return ClusterConfig.newBuilder().setClusterId(cluster)
                .addEntries(ConfigEntry.newBuilder().setKey(key).setValue(value)).build();
    }

    private static SyncServiceGrpc.SyncServiceBlockingStub stub(ManagedChannel ch) {
        return SyncServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static void assertDenied(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> {
                    Status s = ((StatusRuntimeException) e).getStatus();
                    assertThat(s.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(s.getDescription()).contains("authenticated as cluster 'a'", "cluster 'b'");
                });
    }

    private static WatchRequest watch(String cluster) {
        return WatchRequest.newBuilder().setClusterId(cluster).build();
    }

    @Test
    void syncCallsAreBoundToTheTunnelsAuthenticatedCluster() {
        // B reports its own capacity over its own tunnel
        stub(fromB).reportCapacity(CapacityReport.newBuilder().setClusterId("b")
                .addPools(PoolCapacity.newBuilder().setTemplate("base").setIdle(1).setCapacity(2)).build());
        assertThat(hub.registry().get("b").idle("base")).isEqualTo(1);

        // A's tunnel, naming B: every call is refused, and nothing of B's is read or changed
        assertDenied(() -> stub(fromA).register(RegisterRequest.newBuilder().setClusterId("b").build()));
        assertDenied(() -> stub(fromA).reportCapacity(CapacityReport.newBuilder().setClusterId("b")
                .addPools(PoolCapacity.newBuilder().setTemplate("base").setIdle(999).setCapacity(999)).build()));
        assertDenied(() -> stub(fromA).watchConfig(watch("b")).next());
        assertDenied(() -> stub(fromA).watchTemplates(watch("b")).next());
        assertDenied(() -> stub(fromA).watchApiKeys(watch("b")).next());
        assertThat(hub.registry().get("b").idle("base")).isEqualTo(1);
        assertThat(hub.registry().get("a").pools()).isEmpty();

        // ... while A acting as A works, and sees only its own config
        assertThat(stub(fromA).register(RegisterRequest.newBuilder().setClusterId("a").build()).getClusterId()).isEqualTo("a");
        Iterator<ConfigEvent> configA = stub(fromA).watchConfig(watch("a"));
        assertThat(configA.next().getEntriesList()).extracting(ConfigEntry::getValue).containsExactly("10.0.0.1");
        Iterator<TemplateEvent> templatesA = stub(fromA).watchTemplates(watch("a"));
        assertThat(templatesA.next().getTemplatesList()).extracting(Template::getName).containsExactly("base");
        Iterator<ApiKeyEvent> keysA = stub(fromA).watchApiKeys(watch("a"));
        assertThat(keysA.next().getKeysList()).isEmpty();
        stub(fromA).reportCapacity(CapacityReport.newBuilder().setClusterId("a")
                .addPools(PoolCapacity.newBuilder().setTemplate("base").setIdle(2).setCapacity(2)).build());
        assertThat(hub.registry().get("a").idle("base")).isEqualTo(2);
        assertThat(hub.registry().get("b").idle("base")).isEqualTo(1);

        // and B's tunnel cannot act as A either
        assertThatThrownBy(() -> stub(fromB).watchConfig(watch("a")).next())
                .isInstanceOf(StatusRuntimeException.class)
                .extracting(e -> ((StatusRuntimeException) e).getStatus().getCode())
                .isEqualTo(Status.Code.PERMISSION_DENIED);
    }

    @Test
    void aTokenForOneClusterDoesNotOpenATunnelForAnother() {
        assertThatThrownBy(() -> dial("b", TOKEN_A)).hasMessageContaining("401");
    }
}
