package io.agentbox.protocol.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Over a real in-process call, where a server stream is ready exactly while the client has requested messages. */
class ReadyGateTest {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    private static final MethodDescriptor<byte[], byte[]> STREAM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName("test.Gate/Stream")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final int MESSAGES = 5;

    private final AtomicInteger sent = new AtomicInteger();
    /** Completes with what the producer's last awaitReady said: true = it sent all, false = stopped. */
    private final CompletableFuture<Boolean> producerEnd = new CompletableFuture<>();
    private Server server;
    private ManagedChannel channel;

    private void start(boolean closeOnCancel) throws IOException {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor().addService(ServerServiceDefinition.builder("test.Gate")
                .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((req, responses) -> {
                    ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) responses;
                    ReadyGate gate = new ReadyGate();
                    call.setOnReadyHandler(gate::signal);
                    call.setOnCancelHandler(closeOnCancel ? gate::close : gate::signal);
                    new Thread(() -> produce(gate, call), "gate-producer").start();
                })).build()).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    private void produce(ReadyGate gate, ServerCallStreamObserver<byte[]> call) {
        try {
            for (int i = 0; i < MESSAGES; i++) {
                if (!gate.awaitReady(call)) {
                    producerEnd.complete(false);
                    return;
                }
                call.onNext(new byte[] {(byte) i});
                sent.incrementAndGet();
            }
            call.onCompleted();
            producerEnd.complete(true);
        } catch (Throwable e) {
            producerEnd.completeExceptionally(e);
        }
    }

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    /** A client call that asks for nothing until the test calls request(n). */
    private ClientCallStreamObserver<byte[]> openStream(AtomicInteger received) throws Exception {
        CompletableFuture<ClientCallStreamObserver<byte[]>> started = new CompletableFuture<>();
        ClientCalls.asyncServerStreamingCall(channel.newCall(STREAM, CallOptions.DEFAULT), new byte[0],
                new ClientResponseObserver<byte[], byte[]>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<byte[]> requestStream) {
                        requestStream.disableAutoRequestWithInitial(0);
                        started.complete(requestStream);
                    }

                    @Override
                    public void onNext(byte[] value) {
                        received.incrementAndGet();
                    }

                    @Override
                    public void onError(Throwable t) {}

                    @Override
                    public void onCompleted() {}
                });
        return started.get(5, TimeUnit.SECONDS);
    }

    @Test
    void producerSendsOnlyAsManyMessagesAsTheReaderAskedFor() throws Exception {
        start(true);
        AtomicInteger received = new AtomicInteger();
        ClientCallStreamObserver<byte[]> client = openStream(received);
        Thread.sleep(3 * ReadyGate.POLL_MS);
        assertThat(sent).hasValue(0);

        client.request(2);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> received.get() == 2);
        Thread.sleep(3 * ReadyGate.POLL_MS);
        assertThat(sent).hasValue(2);

        client.request(MESSAGES);
        assertThat(producerEnd.get(5, TimeUnit.SECONDS)).isTrue();
        assertThat(sent).hasValue(MESSAGES);
    }

    @Test
    void cancelledCallStopsAWaitingProducerThatTheCancelHandlerCloses() throws Exception {
        start(true);
        cancelAfterOneMessage();
    }

    @Test
    void cancelledCallStopsAWaitingProducerThatTheCancelHandlerOnlySignals() throws Exception {
        start(false);
        cancelAfterOneMessage();
    }

    private void cancelAfterOneMessage() throws Exception {
        ClientCallStreamObserver<byte[]> client = openStream(new AtomicInteger());
        client.request(1);
        Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> sent.get() == 1);
        Thread.sleep(3 * ReadyGate.POLL_MS);
        assertThat(producerEnd).isNotDone();
        client.cancel("reader went away", null);
        assertThat(producerEnd.get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(sent).hasValue(1);
    }

    @Test
    void stopConditionAndCloseEndAWaitThatNoSignalWakes() throws Exception {
        start(true);
        // the request side of a server-streaming call is half-closed after its one request: never ready
        ClientCallStreamObserver<byte[]> call = openStream(new AtomicInteger());
        AtomicBoolean finished = new AtomicBoolean();
        ReadyGate byCondition = new ReadyGate(finished::get);
        ReadyGate byClose = new ReadyGate();
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> await(byCondition, call));
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> await(byClose, call));
        Thread.sleep(3 * ReadyGate.POLL_MS);
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();
        finished.set(true); // no signal: the poll notices
        byClose.close();
        assertThat(first.get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(second.get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(byClose.awaitReady(call)).isFalse();
    }

    private static boolean await(ReadyGate gate, ClientCallStreamObserver<byte[]> call) {
        try {
            return gate.awaitReady(call);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
