package io.agentbox.mux.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC in both directions over one mux session over a real loopback Jetty WebSocket: the hub is
 * the yamux server and accepts the WebSocket, the worker is the yamux client and dials it.
 */
class GrpcOverMuxTest {

    private final MuxConfig config = MuxConfig.defaults(); // smallest legal window: 256 KiB
    private final String id = UUID.randomUUID().toString();
    private final MuxAddress hubServerAddr = MuxAddress.named("hub-" + id);
    private final MuxAddress workerServerAddr = MuxAddress.named("worker-" + id);
    private final AtomicReference<MuxSession> hubSideOfWorker = new AtomicReference<>();
    private final AtomicReference<MuxSession> workerSide = new AtomicReference<>();
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private org.eclipse.jetty.server.Server jetty;
    private WebSocketClient wsClient;
    private URI uri;
    private Server hubServer;

    @BeforeEach
    void setUp() throws Exception {
        jetty = new org.eclipse.jetty.server.Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setPort(0);
        jetty.addConnector(connector);
        jetty.setHandler(WebSocketUpgradeHandler.from(jetty, container -> {
            MuxWebSockets.configure(container, config);
            container.addMapping("/mux", (rq, rs, cb) -> {
                MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.SERVER, config, MuxGrpc.serverAcceptor(hubServerAddr));
                ep.session().thenAccept(hubSideOfWorker::set);
                return ep;
            });
        }));
        jetty.start();
        uri = URI.create("ws://127.0.0.1:" + connector.getLocalPort() + "/mux");
        wsClient = new WebSocketClient();
        MuxWebSockets.configure(wsClient, config);
        wsClient.start();

        hubServer = MuxGrpc.serverBuilder(hubServerAddr).addService(TestServices.echo("hub:")).build().start();
        Server workerServer = MuxGrpc.serverBuilder(workerServerAddr).addService(TestServices.echo("worker:")).build().start();
        cleanup.add(() -> hubServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        cleanup.add(() -> workerServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        connectWorker();
    }

    private MuxSession connectWorker() throws Exception {
        MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.CLIENT, config, MuxGrpc.serverAcceptor(workerServerAddr));
        wsClient.connect(ep, uri).get(10, TimeUnit.SECONDS);
        MuxSession s = ep.session().get(10, TimeUnit.SECONDS);
        workerSide.set(s);
        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS)
                .until(() -> hubSideOfWorker.get() != null && hubSideOfWorker.get().isOpen());
        return s;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
        wsClient.stop();
        jetty.stop();
    }

    private ManagedChannel channel(MuxAddress target) {
        ManagedChannel ch = MuxGrpc.channelBuilder(target).build();
        cleanup.add(() -> ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        return ch;
    }

    private static String unary(ManagedChannel ch, String msg) {
        byte[] r = ClientCalls.blockingUnaryCall(ch, TestServices.UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), msg.getBytes(StandardCharsets.UTF_8));
        return new String(r, StandardCharsets.UTF_8);
    }

    @Test
    void unaryInBothDirectionsOverOneSession() {
        ManagedChannel workerToHub = channel(new MuxAddress("hub", workerSide::get));
        ManagedChannel hubToWorker = channel(new MuxAddress("cluster:x", hubSideOfWorker::get));
        assertThat(unary(workerToHub, "ping")).isEqualTo("hub:ping");
        assertThat(unary(hubToWorker, "ping")).isEqualTo("worker:ping");
        assertThat(unary(workerToHub, "again")).isEqualTo("hub:again");
    }

    @Test
    void manyConcurrentBidiStreamsInBothDirectionsThroughTheSmallestWindow() throws Exception {
        ManagedChannel workerToHub = channel(new MuxAddress("hub", workerSide::get));
        ManagedChannel hubToWorker = channel(new MuxAddress("cluster:x", hubSideOfWorker::get));
        int calls = 32;
        int messages = 16;
        int size = 32 * 1024; // 512 KiB per call each way, 16 MiB per direction of the session
        List<CompletableFuture<String>> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            ManagedChannel ch = i % 2 == 0 ? workerToHub : hubToWorker;
            byte[][] payload = new byte[messages][size];
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            Random rnd = new Random(i);
            for (byte[] m : payload) {
                rnd.nextBytes(m);
                sha.update(m);
            }
            expected.add(HexFormat.of().formatHex(sha.digest()));
            results.add(bidiEcho(ch, payload));
        }
        for (int i = 0; i < calls; i++) {
            assertThat(results.get(i).get(60, TimeUnit.SECONDS)).as("call %d", i).isEqualTo(expected.get(i));
        }
    }

    private static CompletableFuture<String> bidiEcho(ManagedChannel ch, byte[][] payload) throws Exception {
        CompletableFuture<String> done = new CompletableFuture<>();
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(
                ch.newCall(TestServices.BIDI, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)),
                new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        sha.update(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(HexFormat.of().formatHex(sha.digest()));
                    }
                });
        for (byte[] m : payload) {
            requests.onNext(m);
        }
        requests.onCompleted();
        return done;
    }

    @Test
    void tunnelDropFailsWithUnavailableAndTheSameChannelRecoversOnANewSession() throws Exception {
        ManagedChannel hubToWorker = channel(new MuxAddress("cluster:x", hubSideOfWorker::get));
        assertThat(unary(hubToWorker, "before")).isEqualTo("worker:before");

        MuxSession oldHubSide = hubSideOfWorker.get();
        workerSide.get().close();
        oldHubSide.closeFuture().get(10, TimeUnit.SECONDS);

        assertThatThrownBy(() -> unary(hubToWorker, "during"))
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));

        connectWorker();
        assertThat(hubSideOfWorker.get()).isNotSameAs(oldHubSide);
        byte[] r = ClientCalls.blockingUnaryCall(hubToWorker, TestServices.UNARY,
                CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(30, TimeUnit.SECONDS), "after".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(r, StandardCharsets.UTF_8)).isEqualTo("worker:after");
    }

    @Test
    void aStreamForAnAddressWithoutServerIsRefused() throws Exception {
        hubServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        assertThat(MuxServerChannel.bound(hubServerAddr.name())).isNull();
        assertThatThrownBy(() -> workerSide.get().openStream().get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(java.net.ConnectException.class);
    }
}
