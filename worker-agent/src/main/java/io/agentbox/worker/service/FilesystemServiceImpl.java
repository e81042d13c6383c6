package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.toStatus;
import static io.agentbox.worker.service.WorkerStatus.unary;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.ListDirResponse;
import io.agentbox.protocol.v1.MoveRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.RemoveResponse;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.protocol.v1.WatchDirRequest;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.runtime.SandboxFiles;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.ExecutorService;
import java.util.function.BiFunction;

/**
 * filesystem.proto's {@code FilesystemService}: files of running sandboxes, each call with the
 * rights of the user it names, with envd's file semantics (docs/e2b-wire.md#filesystem-service).
 * Errors as worker_common.proto ({@link WorkerStatus}).
 */
final class FilesystemServiceImpl extends FilesystemServiceGrpc.FilesystemServiceImplBase {
    /** Chunk size of ReadFile (filesystem.proto: at most 64 KiB). */
    static final int READ_CHUNK_BYTES = 64 * 1024;

    private final SandboxPools pools;
    private final ExecutorService blocking;

    FilesystemServiceImpl(SandboxPools pools, ExecutorService blocking) {
        this.pools = pools;
        this.blocking = blocking;
    }

    @Override
    public void watchDir(WatchDirRequest req, StreamObserver<WatchDirEvent> responses) {
        ServerCallStreamObserver<WatchDirEvent> call = (ServerCallStreamObserver<WatchDirEvent>) responses;
        try {
            String user = userOf(req.getSandboxId(), req.getUser());
            DirWatch.start(pools.running(req.getSandboxId()).runtime(), user,
                    SandboxPaths.resolve(req.getPath(), SandboxUsers.home(user), false, "path"), req.getRecursive(), call, blocking);
        } catch (RuntimeException e) {
            responses.onError(toStatus(e));
        }
    }

    @Override
    public void readFile(PathRequest req, StreamObserver<FileChunk> responses) {
        ServerCallStreamObserver<FileChunk> call = (ServerCallStreamObserver<FileChunk>) responses;
        ReadyGate gate = new ReadyGate();
        call.setOnReadyHandler(gate::signal);
        call.setOnCancelHandler(gate::close);
        blocking.execute(() -> {
            try {
                String user = userOf(req.getSandboxId(), req.getUser());
                SandboxFiles files = files(req.getSandboxId(), user);
                try (SandboxFiles.Read read = files.read(SandboxPaths.resolve(req.getPath(), SandboxUsers.home(user), false, "path"))) {
                    InputStream in = read.data();
                    byte[] buf = new byte[READ_CHUNK_BYTES];
                    int n;
                    while ((n = in.readNBytes(buf, 0, buf.length)) > 0) {
                        if (!gate.awaitReady(call)) {
                            return; // client went away
                        }
                        call.onNext(FileChunk.newBuilder().setData(ByteString.copyFrom(buf, 0, n)).build());
                    }
                    read.finish();
                }
                call.onCompleted();
            } catch (IOException e) {
                call.onError(Status.UNAVAILABLE.withDescription("read failed: " + e.getMessage()).asRuntimeException());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                call.onError(Status.CANCELLED.asRuntimeException());
            } catch (RuntimeException e) {
                if (!call.isCancelled()) {
                    call.onError(toStatus(e));
                }
            }
        });
    }

    @Override
    public StreamObserver<WriteFileRequest> writeFile(StreamObserver<EntryInfo> out) {
        return new FileWrite(out, (sandboxId, requestedUser) -> {
            String user = userOf(sandboxId, requestedUser);
            return new FileWrite.Target(files(sandboxId, user), SandboxUsers.home(user));
        });
    }

    @Override
    public void listDir(ListDirRequest req, StreamObserver<ListDirResponse> out) {
        unary(out, () -> {
            String user = userOf(req.getSandboxId(), req.getUser());
            return ListDirResponse.newBuilder().addAllEntries(files(req.getSandboxId(), user)
                    .list(SandboxPaths.resolve(req.getPath(), SandboxUsers.home(user), true, "path"),
                            Math.max(1, req.getDepth()))).build();
        });
    }

    @Override
    public void stat(PathRequest req, StreamObserver<EntryInfo> out) {
        unary(out, () -> onPath(req, true, SandboxFiles::stat));
    }

    @Override
    public void makeDir(PathRequest req, StreamObserver<EntryInfo> out) {
        unary(out, () -> onPath(req, false, SandboxFiles::makeDir));
    }

    @Override
    public void move(MoveRequest req, StreamObserver<EntryInfo> out) {
        unary(out, () -> {
            String user = userOf(req.getSandboxId(), req.getUser());
            String home = SandboxUsers.home(user);
            return files(req.getSandboxId(), user).move(SandboxPaths.resolve(req.getSource(), home, false, "source"),
                    SandboxPaths.resolve(req.getDestination(), home, false, "destination"));
        });
    }

    @Override
    public void remove(PathRequest req, StreamObserver<RemoveResponse> out) {
        unary(out, () -> onPath(req, false, (files, path) -> {
            files.remove(path);
            return RemoveResponse.getDefaultInstance();
        }));
    }

    /**
     * The user a request acts as: the one it names (checked by {@link SandboxUsers#require}), or
     * the sandbox's default when it names none (a built template's final USER, docs/e2b-wire.md#sandbox-defaults).
     */
    private String userOf(String sandboxId, String requested) {
        return requested.isEmpty() ? pools.get(sandboxId).runtime().defaultUser() : SandboxUsers.require(requested);
    }

    /** The sandbox's file operations as {@code user} (already checked by {@link SandboxUsers#require}). */
    private SandboxFiles files(String sandboxId, String user) {
        return pools.running(sandboxId).runtime().files(user);
    }

    /** Runs {@code op} on the request's path, resolved against the requesting user's home, with that user's rights. */
    private <T> T onPath(PathRequest req, boolean emptyIsHome, BiFunction<SandboxFiles, String, T> op) {
        String user = userOf(req.getSandboxId(), req.getUser());
        return op.apply(files(req.getSandboxId(), user),
                SandboxPaths.resolve(req.getPath(), SandboxUsers.home(user), emptyIsHome, "path"));
    }
}
