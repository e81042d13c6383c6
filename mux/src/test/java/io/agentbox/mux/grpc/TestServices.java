package io.agentbox.mux.grpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Random;

/** A byte-array echo service described with grpc's generic API (no generated code). */
final class TestServices {

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
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

    static final MethodDescriptor<byte[], byte[]> UNARY = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("test.Echo/Unary")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();

    static final MethodDescriptor<byte[], byte[]> BIDI = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName("test.Echo/Bidi")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();

    private TestServices() {
    }

    /** Unary answers {@code prefix + request}; bidi echoes every message, then completes. */
    static ServerServiceDefinition echo(String prefix) {
        byte[] p = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return ServerServiceDefinition.builder("test.Echo")
                .addMethod(UNARY, ServerCalls.asyncUnaryCall((req, out) -> {
                    byte[] r = new byte[p.length + req.length];
                    System.arraycopy(p, 0, r, 0, p.length);
                    System.arraycopy(req, 0, r, p.length, req.length);
                    out.onNext(r);
                    out.onCompleted();
                }))
                .addMethod(BIDI, ServerCalls.asyncBidiStreamingCall(out -> new StreamObserver<byte[]>() {
                    @Override
                    public void onNext(byte[] value) {
                        out.onNext(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        out.onCompleted();
                    }
                }))
                .build();
    }

    /** Seeded random messages for an echo call and the hex SHA-256 of their concatenation. */
    record Payload(byte[][] messages, String sha256) {}

    static Payload randomPayload(long seed, int messages, int size) {
        byte[][] payload = new byte[messages][size];
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Random rnd = new Random(seed);
        for (byte[] m : payload) {
            rnd.nextBytes(m);
            sha.update(m);
        }
        return new Payload(payload, HexFormat.of().formatHex(sha.digest()));
    }
}
