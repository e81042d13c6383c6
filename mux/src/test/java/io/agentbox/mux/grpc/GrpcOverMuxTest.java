package io.agentbox.mux.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.tools.WebSocketLibrary;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC in both directions over one mux session over a real loopback Jetty WebSocket: the hub is
 * the yamux server and accepts the WebSocket, the worker is the yamux client and dials it.
 */
class GrpcOverMuxTest {

    private MuxGrpcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        // smallest legal yamux window: 256 KiB
        fx = new MuxGrpcFixture(library(), MuxConfig.defaults(), b -> b, TestServices.echo("hub:"), TestServices.echo("worker:"));
    }

    /** The WebSocket under the mux; {@link GrpcOverJettyMuxTest} runs the same tests on Jetty. */
    WebSocketLibrary library() {
        return WebSocketLibrary.NETTY;
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private static String unary(ManagedChannel ch, String msg) {
        byte[] r = ClientCalls.blockingUnaryCall(ch, TestServices.UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), msg.getBytes(StandardCharsets.UTF_8));
        return new String(r, StandardCharsets.UTF_8);
    }

    @Test
    void unaryInBothDirectionsOverOneSession() {
        ManagedChannel workerToHub = fx.workerToHub(b -> b);
        ManagedChannel hubToWorker = fx.hubToWorker(b -> b);
        assertThat(unary(workerToHub, "ping")).isEqualTo("hub:ping");
        assertThat(unary(hubToWorker, "ping")).isEqualTo("worker:ping");
        assertThat(unary(workerToHub, "again")).isEqualTo("hub:again");
    }

    /**
     * gRPC's connections run on the event loop of the mux session they belong to (the socket's, with
     * Netty), on the server and the client side: no thread hand-off between socket and HTTP/2 codec.
     * Jetty's sessions have no single loop: the shared stream group serves them.
     */
    @Test
    void grpcConnectionsRunOnTheirSessionsOwnLoop() throws Exception {
        fx.close();
        Map<String, Thread> ran = new ConcurrentHashMap<>();
        fx = new MuxGrpcFixture(library(), MuxConfig.defaults(), b -> b.directExecutor(),
                recording("hub", ran), recording("worker", ran));
        Thread hubClient = callInline(fx.hubToWorker(b -> b));
        Thread workerClient = callInline(fx.workerToHub(b -> b));
        MuxSession hubSide = fx.hubSideOfWorker.get();
        MuxSession workerSide = fx.workerSide.get();
        if (library() == WebSocketLibrary.NETTY) {
            assertThat(hubSide.eventLoop()).isNotNull();
            assertThat(workerSide.eventLoop()).isNotNull();
            assertThat(hubSide.eventLoop().inEventLoop(hubClient)).as("hub client callback thread").isTrue();
            assertThat(hubSide.eventLoop().inEventLoop(ran.get("hub"))).as("hub server handler thread").isTrue();
            assertThat(workerSide.eventLoop().inEventLoop(workerClient)).as("worker client callback thread").isTrue();
            assertThat(workerSide.eventLoop().inEventLoop(ran.get("worker"))).as("worker server handler thread").isTrue();
        } else {
            assertThat(hubSide.eventLoop()).isNull();
            assertThat(workerSide.eventLoop()).isNull();
            assertThat(ran).containsOnlyKeys("hub", "worker");
        }
    }

    /** A unary service answering "ok" that notes the thread it ran on under {@code name}. */
    private static ServerServiceDefinition recording(String name, Map<String, Thread> ran) {
        return ServerServiceDefinition.builder("test.Echo")
                .addMethod(TestServices.UNARY, ServerCalls.asyncUnaryCall((req, out) -> {
                    ran.put(name, Thread.currentThread());
                    out.onNext("ok".getBytes(StandardCharsets.UTF_8));
                    out.onCompleted();
                }))
                .build();
    }

    /** Calls UNARY with callbacks run inline (on the transport's thread) and returns that thread. */
    private static Thread callInline(ManagedChannel ch) throws Exception {
        CompletableFuture<Thread> onMessage = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(ch.newCall(TestServices.UNARY, CallOptions.DEFAULT.withExecutor(Runnable::run)
                .withDeadlineAfter(10, TimeUnit.SECONDS)), "x".getBytes(StandardCharsets.UTF_8), new StreamObserver<byte[]>() {
                    @Override
                    public void onNext(byte[] value) {
                        onMessage.complete(Thread.currentThread());
                    }

                    @Override
                    public void onError(Throwable t) {
                        onMessage.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        return onMessage.get(10, TimeUnit.SECONDS);
    }

    @Test
    void manyConcurrentBidiStreamsInBothDirectionsThroughTheSmallestWindow() throws Exception {
        ManagedChannel workerToHub = fx.workerToHub(b -> b);
        ManagedChannel hubToWorker = fx.hubToWorker(b -> b);
        int calls = 32;
        int messages = 16;
        int size = 32 * 1024; // 512 KiB per call each way, 16 MiB per direction of the session
        List<CompletableFuture<String>> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            ManagedChannel ch = i % 2 == 0 ? workerToHub : hubToWorker;
            TestServices.Payload payload = TestServices.randomPayload(i, messages, size);
            expected.add(payload.sha256());
            results.add(bidiEcho(ch, payload.messages()));
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
        ManagedChannel hubToWorker = fx.hubToWorker(b -> b);
        assertThat(unary(hubToWorker, "before")).isEqualTo("worker:before");

        MuxSession oldHubSide = fx.hubSideOfWorker.get();
        fx.workerSide.get().close();
        oldHubSide.closeFuture().get(10, TimeUnit.SECONDS);

        assertThatThrownBy(() -> unary(hubToWorker, "during"))
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));

        fx.connectWorker();
        assertThat(fx.hubSideOfWorker.get()).isNotSameAs(oldHubSide);
        byte[] r = ClientCalls.blockingUnaryCall(hubToWorker, TestServices.UNARY,
                CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(30, TimeUnit.SECONDS), "after".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(r, StandardCharsets.UTF_8)).isEqualTo("worker:after");
    }

    @Test
    void aStreamForAnAddressWithoutServerIsRefused() throws Exception {
        fx.hubServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        assertThat(MuxServerChannel.bound(fx.hubServerAddr.name())).isNull();
        assertThatThrownBy(() -> fx.workerSide.get().openStream().get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(java.net.ConnectException.class);
    }
}
