package io.agentbox.mux.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxSession;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue "gRPC over mux under stress", part 3: the tunnel drops while 16 bidi RPCs (8 each way)
 * are moving data. Every call must fail fast with a transport-loss status, nothing may hang, and
 * after the worker dials a new WebSocket the very same {@code ManagedChannel}s work again.
 */
class GrpcTunnelDropTest {

    static final int CALLS = 16;
    static final int MSG = 4 * 1024;
    static final long FAIL_FAST_MS = 2_000;

    /** How the tunnel goes away. */
    enum Drop {
        /** The worker's WebSocket is torn down without a close handshake (TCP close), as on a network loss. */
        WEBSOCKET_DISCONNECT,
        /** The worker closes its mux session: GoAway(0), then the WebSocket is closed. */
        MUX_SESSION_CLOSE
    }

    private MuxGrpcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new MuxGrpcFixture(MuxConfig.defaults(), b -> b, TestServices.echo("hub:"), TestServices.echo("worker:"));
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    /** One endless flow-controlled bidi echo call. */
    private static final class Call {
        final String name;
        final CountDownLatch echoed = new CountDownLatch(1);
        final CompletableFuture<Status> failed = new CompletableFuture<>();
        final AtomicBoolean completedNormally = new AtomicBoolean();
        volatile long failedAtNanos;

        Call(String name, ManagedChannel ch) {
            this.name = name;
            byte[] msg = new byte[MSG];
            ClientCalls.asyncBidiStreamingCall(
                    ch.newCall(TestServices.BIDI, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)),
                    new ClientResponseObserver<byte[], byte[]>() {
                        @Override
                        public void beforeStart(ClientCallStreamObserver<byte[]> requests) {
                            requests.setOnReadyHandler(() -> {
                                while (requests.isReady() && !failed.isDone()) {
                                    requests.onNext(msg);
                                }
                            });
                        }

                        @Override
                        public void onNext(byte[] value) {
                            echoed.countDown();
                        }

                        @Override
                        public void onError(Throwable t) {
                            failedAtNanos = System.nanoTime();
                            failed.complete(Status.fromThrowable(t));
                        }

                        @Override
                        public void onCompleted() {
                            completedNormally.set(true);
                            failed.complete(Status.OK);
                        }
                    });
        }
    }

    @ParameterizedTest
    @EnumSource(Drop.class)
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void everyInFlightCallFailsFastAndTheSameChannelsRecoverOnANewSession(Drop drop) throws Exception {
        ManagedChannel workerToHub = fx.workerToHub(b -> b);
        ManagedChannel hubToWorker = fx.hubToWorker(b -> b);
        List<Call> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            calls.add(i % 2 == 0 ? new Call("worker->hub#" + i, workerToHub) : new Call("hub->worker#" + i, hubToWorker));
        }
        for (Call c : calls) {
            assertThat(c.echoed.await(30, TimeUnit.SECONDS)).as("%s is moving data", c.name).isTrue();
        }
        MuxSession oldWorkerSide = fx.workerSide.get();
        MuxSession oldHubSide = fx.hubSideOfWorker.get();

        long dropAt = System.nanoTime();
        switch (drop) {
            case WEBSOCKET_DISCONNECT -> fx.dropWorkerSocket();
            case MUX_SESSION_CLOSE -> oldWorkerSide.close();
        }

        Map<String, Integer> codes = new TreeMap<>();
        long slowestMs = 0;
        for (Call c : calls) {
            Status s = c.failed.get(10, TimeUnit.SECONDS); // far beyond the bound: nothing hangs
            long ms = TimeUnit.NANOSECONDS.toMillis(c.failedAtNanos - dropAt);
            slowestMs = Math.max(slowestMs, ms);
            codes.merge(c.name.substring(0, c.name.indexOf('#')) + " " + s.getCode() + " (" + s.getDescription() + ")", 1, Integer::sum);
            assertThat(c.completedNormally).as("%s must not complete normally", c.name).isFalse();
            assertThat(s.getCode()).as("%s: %s", c.name, s).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(ms).as("%s failed %d ms after the drop", c.name, ms).isLessThanOrEqualTo(FAIL_FAST_MS);
        }
        oldWorkerSide.closeFuture().get(10, TimeUnit.SECONDS);
        oldHubSide.closeFuture().get(10, TimeUnit.SECONDS);
        System.out.printf("[grpc-tunnel-drop] %s: %d in-flight calls failed, slowest %d ms after the drop; statuses %s%n",
                drop, CALLS, slowestMs, codes);

        fx.connectWorker();
        assertThat(fx.hubSideOfWorker.get()).isNotSameAs(oldHubSide);
        CallOptions waitForReady = CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThat(new String(ClientCalls.blockingUnaryCall(hubToWorker, TestServices.UNARY, waitForReady,
                "after".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8)).isEqualTo("worker:after");
        assertThat(new String(ClientCalls.blockingUnaryCall(workerToHub, TestServices.UNARY, waitForReady,
                "after".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8)).isEqualTo("hub:after");
        // and streaming works again on the same channels
        List<Call> again = List.of(new Call("worker->hub#again", workerToHub), new Call("hub->worker#again", hubToWorker));
        for (Call c : again) {
            assertThat(c.echoed.await(30, TimeUnit.SECONDS)).as("%s is moving data", c.name).isTrue();
        }
    }
}
