package io.agentbox.protocol.image;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.regex.Pattern;

/**
 * Both ends of a blob stream (blob.proto: {@code BlobRef} in, {@code BlobChunk}s out), shared by
 * the worker's {@code ReadImageBlob} and the hub's {@code ReadBlob}.
 *
 * <p>Sending honours gRPC flow control: a chunk is written only while the call is ready, so a
 * slow reader holds at most the call's window plus one chunk in memory. Receiving checks what the
 * stream says against what the reader expects: the size in the first chunk, no more bytes than
 * that size, chunks of at most {@link #CHUNK_BYTES}, and the SHA-256 of exactly the bytes
 * received against the digest asked for. A failed check is an {@link IOException} naming the blob
 * and the difference; the reader discards what it wrote.
 */
public final class BlobStreams {
    /** Largest {@code data} of one chunk: 1 MiB. */
    public static final int CHUNK_BYTES = 1 << 20;
    private static final Pattern DIGEST = Pattern.compile("sha256:[a-f0-9]{64}");

    private BlobStreams() {}

    /** Whether {@code digest} is {@code sha256:} and 64 lowercase hex digits. */
    public static boolean isDigest(String digest) {
        return digest != null && DIGEST.matcher(digest).matches();
    }

    /** A fresh SHA-256. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }

    /** {@code sha256:<hex>} of a finished digest. */
    public static String digestOf(MessageDigest finished) {
        return "sha256:" + HexFormat.of().formatHex(finished.digest());
    }

    // ---------------------------------------------------------------- sending

    /** Where a sender finds a blob: its file, or null when it has none. */
    @FunctionalInterface
    public interface Lookup {
        Path find(String digest) throws IOException;
    }

    /**
     * Serves one {@code BlobRef} request: checks the digest, finds the file, then streams it on
     * {@code executor} (this method returns at once; call it from the service method, which must
     * not have returned yet, so the call's ready handler is set in time).
     * INVALID_ARGUMENT for a malformed digest; NOT_FOUND with reason {@link ErrorReason#BLOB_NOT_FOUND}
     * when {@code lookup} has no such blob (or it vanished before it was opened); UNAVAILABLE when
     * reading fails.
     *
     * @param what who holds the blobs, for error messages ("the hub", "worker w1")
     */
    public static void serve(BlobRef request, StreamObserver<BlobChunk> responses, Lookup lookup, Executor executor, String what) {
        ServerCallStreamObserver<BlobChunk> call = (ServerCallStreamObserver<BlobChunk>) responses;
        String digest = request.getDigest();
        if (!isDigest(digest)) {
            call.onError(Status.INVALID_ARGUMENT.withDescription("blob digest '" + digest
                    + "' is not sha256: and 64 lowercase hex digits").asRuntimeException());
            return;
        }
        ReadyGate gate = new ReadyGate();
        call.setOnReadyHandler(gate::signal);
        call.setOnCancelHandler(gate::signal);
        try {
            executor.execute(() -> {
                try {
                    Path file = lookup.find(digest);
                    if (file == null) {
                        throw new NoSuchFileException(digest);
                    }
                    try (InputStream in = Files.newInputStream(file)) {
                        long size = Files.size(file);
                        byte[] buf = new byte[CHUNK_BYTES];
                        boolean first = true;
                        while (true) {
                            int n = in.readNBytes(buf, 0, buf.length);
                            if (n == 0 && !first) {
                                break;
                            }
                            if (!gate.awaitReady(call)) {
                                return; // the reader went away
                            }
                            BlobChunk.Builder c = BlobChunk.newBuilder().setData(ByteString.copyFrom(buf, 0, n));
                            if (first) {
                                c.setSize(size);
                                first = false;
                            }
                            call.onNext(c.build());
                            if (n < buf.length) {
                                break;
                            }
                        }
                    }
                    call.onCompleted();
                } catch (NoSuchFileException e) {
                    call.onError(ErrorReason.BLOB_NOT_FOUND.exception(Status.Code.NOT_FOUND, what + " has no blob " + digest));
                } catch (IOException e) {
                    call.onError(Status.UNAVAILABLE.withDescription(what + " cannot read blob " + digest + ": " + e.getMessage())
                            .asRuntimeException());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    call.onError(Status.CANCELLED.withDescription(what + " is stopping").asRuntimeException());
                } catch (RuntimeException e) {
                    if (!call.isCancelled()) {
                        call.onError(Status.INTERNAL.withDescription(what + ": blob " + digest + ": " + e).asRuntimeException());
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            call.onError(Status.RESOURCE_EXHAUSTED.withDescription(what + " is serving too many blob reads; try again later")
                    .asRuntimeException());
        }
    }

    // ---------------------------------------------------------------- receiving

    /**
     * Reads blob {@code digest} through {@code call} (a blocking stub's server-streaming method)
     * into {@code out}, checking it (see the class comment). The call runs in a cancellable
     * context that is cancelled when this returns, so a reader that stops early ends the stream.
     *
     * @param expectedSize the size the reader knows from a descriptor, or -1 when it knows none
     * @param maxBytes the largest blob the reader takes
     * @param progress told the number of new bytes as they arrive
     * @return the blob's size
     * @throws IOException naming the blob: the sender's gRPC error (its description, and
     *     {@code BLOB_NOT_FOUND} as "has no blob"), a size other than expected or above
     *     {@code maxBytes}, an oversized chunk, a short or long stream, a digest mismatch
     */
    public static long read(Function<BlobRef, Iterator<BlobChunk>> call, String digest, long expectedSize, long maxBytes,
                            OutputStream out, LongConsumer progress) throws IOException {
        if (!isDigest(digest)) {
            throw new IOException("blob digest '" + digest + "' is not sha256: and 64 lowercase hex digits");
        }
        Context.CancellableContext context = Context.current().withCancellation();
        Context previous = context.attach();
        try {
            return receive(call.apply(BlobRef.newBuilder().setDigest(digest).build()), digest, expectedSize, maxBytes, out,
                    progress);
        } catch (StatusRuntimeException e) {
            String d = e.getStatus().getDescription() == null ? e.getStatus().getCode().name() : e.getStatus().getDescription();
            if (ErrorReason.BLOB_NOT_FOUND.in(e)) {
                throw new NoSuchFileException(digest, null, d);
            }
            throw new IOException("blob " + digest + ": " + e.getStatus().getCode() + ": " + d, e);
        } finally {
            context.detach(previous);
            context.cancel(null);
        }
    }

    /** The checks of {@link #read} over chunks already flowing. */
    public static long receive(Iterator<BlobChunk> chunks, String digest, long expectedSize, long maxBytes, OutputStream out,
                               LongConsumer progress) throws IOException {
        MessageDigest sha = sha256();
        long size = -1;
        long got = 0;
        while (chunks.hasNext()) {
            BlobChunk c = chunks.next();
            if (size < 0) {
                size = c.getSize();
                if (expectedSize >= 0 && size != expectedSize) {
                    throw new IOException("blob " + digest + ": the sender has " + size + " bytes, expected " + expectedSize);
                }
                if (size > maxBytes) {
                    throw new IOException("blob " + digest + ": " + size + " bytes, more than the " + maxBytes + " allowed");
                }
            }
            int n = c.getData().size();
            if (n > CHUNK_BYTES) {
                throw new IOException("blob " + digest + ": a chunk of " + n + " bytes (at most " + CHUNK_BYTES + ")");
            }
            if (got + n > size) {
                throw new IOException("blob " + digest + ": more bytes than the " + size + " announced");
            }
            c.getData().writeTo(out);
            for (ByteBuffer b : c.getData().asReadOnlyByteBufferList()) {
                sha.update(b);
            }
            got += n;
            progress.accept(n);
        }
        if (size < 0) {
            throw new IOException("blob " + digest + ": the stream ended without a chunk");
        }
        if (got != size) {
            throw new IOException("blob " + digest + ": the stream ended after " + got + " of " + size + " bytes");
        }
        String actual = digestOf(sha);
        if (!actual.equals(digest)) {
            throw new IOException("blob " + digest + ": digest mismatch: the " + got + " bytes received hash to " + actual);
        }
        return got;
    }
}
