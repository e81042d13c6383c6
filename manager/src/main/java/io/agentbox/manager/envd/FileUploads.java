package io.agentbox.manager.envd;

import com.google.protobuf.ByteString;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Limits;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.http.MultiPartFormData;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Streams one file to the worker's client-streaming {@code WriteFile} RPC in chunks of at most
 * 64 KiB, waiting for gRPC flow control (so at most one chunk is buffered per call); and the
 * request-body handling every upload route shares (gzip coding, multipart parsing with limits).
 */
public final class FileUploads {
    public static final int CHUNK = 64 * 1024;
    /** Longest time one file upload may take end to end. */
    static final long UPLOAD_DEADLINE_MS = TimeUnit.MINUTES.toMillis(30);

    private FileUploads() {}

    /**
     * Writes {@code in} to {@code path} in the sandbox as the target's user (parents created, file
     * overwritten; a relative path lands in that user's home).
     *
     * @param budget largest number of bytes accepted from {@code in}
     * @return the written file's entry
     * @throws StatusRuntimeException the worker's error
     * @throws io.agentbox.manager.http.ApiException 413 when {@code in} holds more than {@code budget}
     */
    static EntryInfo write(SandboxTarget target, String path, InputStream in, long budget) throws IOException {
        return write(target.channel(), target.sandboxId(), target.user(), path, in, budget);
    }

    /**
     * As above for any API surface: writes {@code in} to {@code path} in sandbox {@code sandboxId}
     * through {@code channel} (its worker) as {@code user} ("" = the sandbox's default user).
     */
    public static EntryInfo write(Channel channel, String sandboxId, String user, String path, InputStream in, long budget)
            throws IOException {
        CompletableFuture<EntryInfo> result = new CompletableFuture<>();
        ReadyGate gate = new ReadyGate(result::isDone); // a failed worker call stops the wait
        ClientCallStreamObserver<WriteFileRequest>[] callRef = newRef();
        StreamObserver<WriteFileRequest> out = FilesystemServiceGrpc.newStub(channel)
                .withDeadlineAfter(UPLOAD_DEADLINE_MS, TimeUnit.MILLISECONDS)
                .writeFile(new ClientResponseObserver<WriteFileRequest, EntryInfo>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<WriteFileRequest> call) {
                        callRef[0] = call;
                        call.setOnReadyHandler(gate::signal);
                    }

                    @Override
                    public void onNext(EntryInfo value) {
                        result.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        result.completeExceptionally(t);
                        gate.signal();
                    }

                    @Override
                    public void onCompleted() {
                        result.completeExceptionally(Status.INTERNAL.withDescription("worker sent no entry").asRuntimeException());
                    }
                });
        ClientCallStreamObserver<WriteFileRequest> call = callRef[0];
        try {
            out.onNext(WriteFileRequest.newBuilder()
                    .setPath(PathRequest.newBuilder().setSandboxId(sandboxId).setUser(user).setPath(path))
                    .build());
            byte[] buf = new byte[CHUNK];
            long total = 0;
            int n;
            while ((n = in.readNBytes(buf, 0, buf.length)) > 0) {
                total += n;
                if (total > budget) {
                    call.cancel("upload too large", null);
                    throw HttpIo.tooLarge(budget);
                }
                gate.awaitReady(call);
                if (result.isDone()) {
                    break; // the worker failed early; its error is reported below
                }
                out.onNext(WriteFileRequest.newBuilder().setData(ByteString.copyFrom(buf, 0, n)).build());
            }
            if (!result.isDone()) {
                out.onCompleted();
            }
            return result.get(UPLOAD_DEADLINE_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            call.cancel("interrupted", e);
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            // keep the trailers: the worker's ErrorReason (SANDBOX_PAUSED, SANDBOX_NOT_FOUND) rides in them
            throw Status.fromThrowable(e.getCause()).asRuntimeException(Status.trailersFromThrowable(e.getCause()));
        } catch (TimeoutException e) {
            call.cancel("timeout", e);
            throw Status.DEADLINE_EXCEEDED.withDescription("upload timed out").asRuntimeException();
        } catch (IOException | RuntimeException e) {
            call.cancel("upload aborted", e);
            throw e;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> ClientCallStreamObserver<T>[] newRef() {
        return (ClientCallStreamObserver<T>[]) new ClientCallStreamObserver[1];
    }

    /**
     * The request's octet-stream body, gunzipped for {@code Content-Encoding: gzip}; read failures
     * (bad framing, not gzip after all) are 400s.
     *
     * @param budget the largest file accepted, in bytes: a plain body whose Content-Length is larger
     *     is refused here, before the sandbox's file is touched (a chunked or gzip body can only be
     *     cut off by {@link #write} as it goes past, which leaves the file partly written)
     * @throws ApiException 413 for a Content-Length over {@code budget}, 415 for another content
     *     coding, 400 when a gzip body has no gzip header
     */
    public static InputStream decodedBody(Request request, long budget) {
        String coding = request.getHeaders().get(HttpHeader.CONTENT_ENCODING);
        boolean plain = coding == null || coding.isBlank() || "identity".equalsIgnoreCase(coding.trim());
        if (plain && request.getLength() > budget) {
            throw HttpIo.tooLarge(budget);
        }
        InputStream raw = HttpIo.clientInput(Content.Source.asInputStream(request));
        if (plain) {
            return raw;
        }
        if (!"gzip".equalsIgnoreCase(coding.trim())) {
            throw ApiException.e2b(415, "Content-Encoding '" + InputText.quote(coding.trim())
                    + "' is not supported; send the file as is or gzip-compressed");
        }
        try {
            return HttpIo.clientInput(new GZIPInputStream(raw, CHUNK));
        } catch (IOException e) {
            throw ApiException.e2b(400, "Content-Encoding is gzip but the body is not: " + e.getMessage());
        }
    }

    /**
     * Parses a {@code multipart/form-data} body within {@code limits} (whole body
     * {@link Limits#uploadBody()}, parts over {@link Limits#uploadMemoryPart()} spilled to files in
     * {@code spoolDir}, at most {@link Limits#uploadParts()} parts). The caller closes the parts.
     *
     * @throws ApiException 400 for a missing boundary or a malformed body, 413 beyond a limit
     */
    public static MultiPartFormData.Parts parseMultipart(Request request, String contentType, Limits limits, Path spoolDir)
            throws IOException {
        String boundary = MultiPart.extractBoundary(contentType);
        if (boundary == null || boundary.isEmpty()) {
            throw ApiException.e2b(400, "multipart body without boundary");
        }
        if (request.getLength() > limits.uploadBody()) {
            throw HttpIo.tooLarge(limits.uploadBody());
        }
        MultiPartFormData.Parser parser = new MultiPartFormData.Parser(boundary);
        parser.setFilesDirectory(spoolDir);
        parser.setMaxMemoryFileSize(limits.uploadMemoryPart());
        parser.setMaxLength(limits.uploadBody());
        parser.setMaxParts(limits.uploadParts());
        try {
            return parser.parse(request).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            String msg = String.valueOf(e.getCause().getMessage());
            if (msg.toLowerCase().contains("max")) {
                throw ApiException.e2b(413, "upload rejected: " + msg);
            }
            throw ApiException.e2b(400, "malformed multipart body: " + msg);
        }
    }

    /** A private temporary directory for multipart parts too large for memory (deleted at exit). */
    public static Path spoolDirectory() {
        try {
            Path dir = Files.createTempDirectory("agentbox-uploads");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create upload spool directory", e);
        }
    }
}
