package io.agentbox.mux.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxSession;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue "gRPC over mux under stress", part 2: a server-streaming RPC whose client reads slowly
 * (manual flow control, one {@code request(1)} every 10 ms) while the server pushes as fast as
 * {@code isReady()} allows. The sender must be held back, the mux session's undelivered inbound
 * bytes and Netty's direct memory must stay bounded, and other RPCs on the same session (another
 * mux stream) and on the same HTTP/2 connection (same mux stream) must keep flowing meanwhile.
 */
class GrpcSlowConsumerTest {

    static final int MUX_WINDOW = 256 * 1024;
    /** Explicit (so BDP auto-tuning is off) and larger than the mux window, so both layers are in play. */
    static final int HTTP2_WINDOW = 512 * 1024;
    static final int MSG = 16 * 1024;
    /** What an unbounded sender would push: far more than the bounds below. */
    static final int FLOOD_MESSAGES = 16_384; // 256 MiB
    static final int SLOW_READS = 150;

    static final MethodDescriptor<byte[], byte[]> FLOOD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName("test.Flood/Flood")
            .setRequestMarshaller(TestServices.BYTES).setResponseMarshaller(TestServices.BYTES).build();

    private final AtomicLong serverSent = new AtomicLong();
    private final AtomicInteger serverNotReady = new AtomicInteger();
    private final CompletableFuture<Void> serverSawCancel = new CompletableFuture<>();
    private MuxGrpcFixture fx;
    private ScheduledExecutorService timer;

    /** Pushes {@link #FLOOD_MESSAGES} messages of {@link #MSG} bytes, each only while the call is ready. */
    private ServerServiceDefinition flood() {
        byte[] msg = new byte[MSG];
        new Random(7).nextBytes(msg);
        return ServerServiceDefinition.builder("test.Flood")
                .addMethod(FLOOD, ServerCalls.asyncServerStreamingCall((req, out) -> {
                    ServerCallStreamObserver<byte[]> o = (ServerCallStreamObserver<byte[]>) out;
                    o.setOnCancelHandler(() -> serverSawCancel.complete(null));
                    o.setOnReadyHandler(() -> {
                        while (o.isReady() && !o.isCancelled() && serverSent.get() < FLOOD_MESSAGES) {
                            o.onNext(msg);
                            serverSent.incrementAndGet();
                        }
                        if (!o.isReady()) {
                            serverNotReady.incrementAndGet();
                        }
                        if (serverSent.get() == FLOOD_MESSAGES && !o.isCancelled()) {
                            o.onCompleted();
                        }
                    });
                }))
                .build();
    }

    @BeforeEach
    void setUp() throws Exception {
        MuxConfig config = MuxConfig.builder().initialStreamWindow(MUX_WINDOW).build();
        ServerServiceDefinition flood = flood();
        fx = new MuxGrpcFixture(config, b -> b.flowControlWindow(HTTP2_WINDOW).addService(flood),
                TestServices.echo("hub:"), TestServices.echo("worker:"));
        timer = Executors.newScheduledThreadPool(2);
    }

    @AfterEach
    void tearDown() throws Exception {
        timer.shutdownNow();
        fx.close();
    }

    /** Peak of a gauge, sampled every millisecond or so. */
    private static final class Peak {
        final LongSupplier gauge;
        final AtomicLong max = new AtomicLong(Long.MIN_VALUE);

        Peak(LongSupplier gauge) {
            this.gauge = gauge;
        }

        void sample() {
            long v = gauge.getAsLong();
            max.accumulateAndGet(v, Math::max);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void slowReaderHoldsTheSenderBackWithBoundedMemoryWhileOtherCallsFlow() throws Exception {
        ManagedChannel slowChannel = fx.workerToHub(b -> b.flowControlWindow(HTTP2_WINDOW));
        ManagedChannel otherChannel = fx.workerToHub(b -> b.flowControlWindow(HTTP2_WINDOW)); // another mux stream
        // warm both channels up (connections, pool arenas) before taking the memory baseline
        warmUp(slowChannel);
        warmUp(otherChannel);
        MuxSession worker = fx.workerSide.get();
        MuxSession hub = fx.hubSideOfWorker.get();
        long directBaseline = PlatformDependent.usedDirectMemory();
        long pooledBaseline = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();

        AtomicLong received = new AtomicLong();
        AtomicLong maxOutstanding = new AtomicLong();
        Peak workerBuffered = new Peak(worker::bufferedInboundBytes);
        Peak hubBuffered = new Peak(hub::bufferedInboundBytes);
        Peak direct = new Peak(PlatformDependent::usedDirectMemory);
        Peak pooled = new Peak(() -> PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory());
        Peak outstanding = new Peak(() -> serverSent.get() - received.get());
        var sampler = timer.scheduleAtFixedRate(() -> {
            workerBuffered.sample();
            hubBuffered.sample();
            direct.sample();
            pooled.sample();
            outstanding.sample();
        }, 0, 1, TimeUnit.MILLISECONDS);

        CompletableFuture<Status> slowClosed = new CompletableFuture<>();
        ClientCall<byte[], byte[]> slow = slowChannel.newCall(FLOOD, CallOptions.DEFAULT.withDeadlineAfter(100, TimeUnit.SECONDS));
        slow.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                long r = received.incrementAndGet();
                maxOutstanding.accumulateAndGet(serverSent.get() - r, Math::max);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                slowClosed.complete(status);
            }
        }, new Metadata());
        slow.sendMessage(new byte[0]);
        slow.halfClose();
        slow.request(1);
        long start = System.nanoTime();
        var reader = timer.scheduleAtFixedRate(() -> slow.request(1), 10, 10, TimeUnit.MILLISECONDS);

        // the sender must hit back-pressure
        org.awaitility.Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() -> serverNotReady.get() > 0);

        // meanwhile, other calls keep flowing: 1 MiB each way on another mux stream of the same
        // session, and the same on another HTTP/2 stream of the slow call's own connection
        long fastStart = System.nanoTime();
        AtomicLong fastSent = new AtomicLong();
        AtomicLong fastReceived = new AtomicLong();
        byte[][] payload = new byte[64][MSG];
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        Random rnd = new Random(3);
        for (byte[] m : payload) {
            rnd.nextBytes(m);
            sha.update(m);
        }
        String expected = HexFormat.of().formatHex(sha.digest());
        CompletableFuture<String> otherStream = GrpcConcurrentStreamsStressTest.flowControlledEcho(otherChannel, payload, fastSent, fastReceived);
        CompletableFuture<String> sameConnection = GrpcConcurrentStreamsStressTest.flowControlledEcho(slowChannel, payload, fastSent, fastReceived);
        assertThat(otherStream.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
        assertThat(sameConnection.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
        long fastMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fastStart);
        assertThat(slowClosed).as("the slow call is still open while the fast calls completed").isNotDone();
        long receivedWhenFastDone = received.get();

        // keep reading slowly for a while, then give up on the flood
        org.awaitility.Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> received.get() >= receivedWhenFastDone + SLOW_READS);
        long slowMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        reader.cancel(false);
        sampler.cancel(false);
        slow.cancel("test done", null);
        assertThat(slowClosed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
        serverSawCancel.get(10, TimeUnit.SECONDS);

        long outstandingBound = (HTTP2_WINDOW + 2L * MUX_WINDOW + 256 * 1024) / MSG;
        long bufferedBound = 2L * MUX_WINDOW + 64 * 1024;
        long directBound = 32L * 1024 * 1024; // pool chunks (4 MiB) x arenas dominate; the flood is 256 MiB
        System.out.printf("[grpc-slow-consumer] slow call: received %d of %d sent in %d ms, server not-ready %d times, "
                        + "max outstanding %d msgs (sampled %d, bound %d); fast calls 2 x %d KiB each way in %d ms; "
                        + "peak buffered inbound worker %d B hub %d B (bound %d); direct memory growth %d B "
                        + "(PlatformDependent, baseline %d), %d B (PooledByteBufAllocator.DEFAULT, baseline %d) (bound %d)%n",
                received.get(), serverSent.get(), slowMs, serverNotReady.get(), maxOutstanding.get(), outstanding.max.get(),
                outstandingBound, payload.length * MSG / 1024, fastMs, workerBuffered.max.get(), hubBuffered.max.get(),
                bufferedBound, direct.max.get() - directBaseline, directBaseline, pooled.max.get() - pooledBaseline, pooledBaseline, directBound);

        assertThat(serverNotReady.get()).as("isReady() turned false").isPositive();
        assertThat(serverSent.get()).as("the sender was held back").isLessThan(FLOOD_MESSAGES / 4);
        assertThat(maxOutstanding.get()).as("messages sent but not yet read, at each read").isLessThanOrEqualTo(outstandingBound);
        assertThat(outstanding.max.get()).as("messages sent but not yet read, sampled").isLessThanOrEqualTo(outstandingBound);
        assertThat(workerBuffered.max.get()).as("slow reader's session: undelivered inbound bytes").isLessThanOrEqualTo(bufferedBound);
        assertThat(hubBuffered.max.get()).as("sender's session: undelivered inbound bytes").isLessThanOrEqualTo(bufferedBound);
        if (directBaseline >= 0) {
            assertThat(direct.max.get() - directBaseline).as("Netty direct memory growth").isLessThanOrEqualTo(directBound);
        }
        assertThat(pooled.max.get() - pooledBaseline).as("pooled direct memory growth").isLessThanOrEqualTo(directBound);
    }

    private static void warmUp(ManagedChannel ch) throws Exception {
        byte[][] payload = new byte[16][MSG];
        GrpcConcurrentStreamsStressTest.flowControlledEcho(ch, payload, new AtomicLong(), new AtomicLong()).get(30, TimeUnit.SECONDS);
    }
}
