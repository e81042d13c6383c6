package io.agentbox.mux.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue "gRPC over mux under stress", part 1: 128 concurrent bidi streaming RPCs over one mux
 * session, half hub→worker and half worker→hub at the same time, each moving 256 KiB each way,
 * through a 16 KiB HTTP/2 flow-control window (BDP auto-tuning off) and the smallest yamux stream
 * window (256 KiB). Senders respect gRPC's isReady, so every layer's back-pressure is exercised.
 */
class GrpcConcurrentStreamsStressTest {

    static final int HTTP2_WINDOW = 16 * 1024;
    static final int CALLS = 128;
    static final int MESSAGES = 32;
    static final int SIZE = 8 * 1024; // 256 KiB per call each way

    private MuxGrpcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        MuxConfig config = MuxConfig.builder().initialStreamWindow(256 * 1024).build();
        fx = new MuxGrpcFixture(config, b -> b.flowControlWindow(HTTP2_WINDOW),
                TestServices.echo("hub:"), TestServices.echo("worker:"));
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void manyBidiStreamsBothWaysThroughSmallWindowsFinishWithoutDeadlock() throws Exception {
        ManagedChannel workerToHub = fx.workerToHub(b -> b.flowControlWindow(HTTP2_WINDOW));
        ManagedChannel hubToWorker = fx.hubToWorker(b -> b.flowControlWindow(HTTP2_WINDOW));
        AtomicLong bytesSent = new AtomicLong();
        AtomicLong bytesReceived = new AtomicLong();
        List<CompletableFuture<String>> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < CALLS; i++) {
            TestServices.Payload payload = TestServices.randomPayload(i, MESSAGES, SIZE);
            expected.add(payload.sha256());
            results.add(flowControlledEcho(i % 2 == 0 ? workerToHub : hubToWorker, payload.messages(), bytesSent, bytesReceived));
        }
        // generous: on a loaded 2-core box this takes a few seconds; a deadlock never finishes
        CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (int i = 0; i < CALLS; i++) {
            assertThat(results.get(i).join()).as("sha-256 of echo of call %d", i).isEqualTo(expected.get(i));
        }
        long perDirection = (long) CALLS * MESSAGES * SIZE;
        assertThat(bytesSent.get()).isEqualTo(perDirection);
        assertThat(bytesReceived.get()).isEqualTo(perDirection);
        System.out.printf("[grpc-stress] %d concurrent bidi calls (both directions), %d KiB each way per call: "
                        + "sent %d B + echoed %d B = %d B over the session in %d ms (%.1f MiB/s)%n",
                CALLS, MESSAGES * SIZE / 1024, bytesSent.get(), bytesReceived.get(), 2 * perDirection, elapsedMs,
                2.0 * perDirection / (1 << 20) / Math.max(1, elapsedMs) * 1000);
    }

    /** Sends {@code payload} only while the call is ready; completes with the SHA-256 of what came back. */
    static CompletableFuture<String> flowControlledEcho(ManagedChannel ch, byte[][] payload, AtomicLong sent, AtomicLong received)
            throws Exception {
        CompletableFuture<String> done = new CompletableFuture<>();
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        ClientCalls.asyncBidiStreamingCall(
                ch.newCall(TestServices.BIDI, CallOptions.DEFAULT.withDeadlineAfter(120, TimeUnit.SECONDS)),
                new ClientResponseObserver<byte[], byte[]>() {
                    private int next;

                    @Override
                    public void beforeStart(ClientCallStreamObserver<byte[]> requests) {
                        requests.setOnReadyHandler(() -> {
                            // onReady runs serially on the call executor
                            while (requests.isReady() && next < payload.length) {
                                requests.onNext(payload[next++]);
                                sent.addAndGet(SIZE);
                            }
                            if (next == payload.length) {
                                next++;
                                requests.onCompleted();
                            }
                        });
                    }

                    @Override
                    public void onNext(byte[] value) {
                        sha.update(value);
                        received.addAndGet(value.length);
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
        return done;
    }
}
