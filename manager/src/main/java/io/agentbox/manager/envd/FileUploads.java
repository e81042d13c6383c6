package io.agentbox.manager.envd;

import com.google.protobuf.ByteString;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Streams one file to the worker's client-streaming {@code WriteFile} RPC in chunks of at most
 * 64 KiB, waiting for gRPC flow control (so at most one chunk is buffered per call).
 */
final class FileUploads {
    static final int CHUNK = 64 * 1024;
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
        CompletableFuture<EntryInfo> result = new CompletableFuture<>();
        ReadyGate gate = new ReadyGate(result::isDone); // a failed worker call stops the wait
        ClientCallStreamObserver<WriteFileRequest>[] callRef = newRef();
        StreamObserver<WriteFileRequest> out = FilesystemServiceGrpc.newStub(target.channel())
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
                    .setPath(PathRequest.newBuilder().setSandboxId(target.sandboxId()).setUser(target.user()).setPath(path))
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
}
