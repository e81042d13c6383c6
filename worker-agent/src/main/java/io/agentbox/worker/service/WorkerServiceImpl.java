package io.agentbox.worker.service;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.ErrorReason;
import com.google.protobuf.ByteString;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.DeleteSnapshotResponse;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.KillSandboxResponse;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.ListDirResponse;
import io.agentbox.protocol.v1.ListProcessesResponse;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.ListSandboxesResponse;
import io.agentbox.protocol.v1.MoveRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.PauseSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxResponse;
import io.agentbox.protocol.v1.SandboxMetricsRequest;
import io.agentbox.protocol.v1.SandboxMetricsResponse;
import io.agentbox.protocol.v1.PortRequest;
import io.agentbox.protocol.v1.PortResponse;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.AttachProcessRequest;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.RemoveResponse;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.SendInputResponse;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.agentbox.protocol.v1.Signal;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.agentbox.protocol.v1.SignalProcessResponse;
import io.agentbox.protocol.v1.SnapshotInfo;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.protocol.v1.UpdateProcessRequest;
import io.agentbox.protocol.v1.UpdateProcessResponse;
import io.agentbox.protocol.v1.WorkerServiceGrpc;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.protocol.v1.WatchDirRequest;
import io.agentbox.worker.build.BuildService;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.pool.ClaimedSandbox;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.process.ManagedProcess;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.SandboxFiles;
import io.agentbox.worker.runtime.TerminalSize;
import io.agentbox.worker.snapshot.Snapshots;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's gRPC service (worker.proto) over the warm pools and the runtime. Errors follow
 * the status codes listed in worker.proto; process and file semantics follow E2B envd (see
 * docs/e2b-wire.md#process-service, docs/e2b-wire.md#filesystem-service).
 */
public final class WorkerServiceImpl extends WorkerServiceGrpc.WorkerServiceImplBase {
    /** Chunk size of ReadFile (worker.proto: at most 64 KiB). */
    public static final int READ_CHUNK_BYTES = 64 * 1024;
    /** Largest file WriteFile accepts. */
    public static final long MAX_WRITE_BYTES = 1L << 30;

    private static final Logger log = LoggerFactory.getLogger(WorkerServiceImpl.class);

    private final SandboxPools pools;
    /** Template builds; null on a worker that cannot build (no local runtime with an image store). */
    private final BuildService builds;
    /** Null when the worker has no image store (snapshots then fail with FAILED_PRECONDITION). */
    private final Snapshots snapshots;
    /** Null when the worker has no image store (ReadImageBlob then fails with FAILED_PRECONDITION). */
    private final ImageStore images;
    /** Runs blocking work (file streaming) off the gRPC call executors. */
    private final ExecutorService blocking = Executors.newCachedThreadPool(DaemonThreads.numbered("worker-rpc"));

    public WorkerServiceImpl(SandboxPools pools) {
        this(pools, null, null);
    }

    /**
     * @param builds runs BuildTemplate calls; null: they fail with FAILED_PRECONDITION
     * @param snapshots this worker's snapshots; null: CreateSnapshot and DeleteSnapshot fail with FAILED_PRECONDITION
     */
    public WorkerServiceImpl(SandboxPools pools, BuildService builds,
                             Snapshots snapshots) {
        this(pools, builds, snapshots, snapshots == null ? null : snapshots.store());
    }

    /** As above; {@code images} serves ReadImageBlob (null: FAILED_PRECONDITION). */
    public WorkerServiceImpl(SandboxPools pools, BuildService builds,
                             Snapshots snapshots, ImageStore images) {
        this.pools = pools;
        this.builds = builds;
        this.snapshots = snapshots;
        this.images = images;
    }

    // ---- image blobs (the hub keeps built images' blobs: docs/template-builds.md)

    @Override
    public void readImageBlob(BlobRef req, StreamObserver<BlobChunk> out) {
        if (images == null) {
            out.onError(Status.FAILED_PRECONDITION.withDescription("this worker has no image store").asRuntimeException());
            return;
        }
        BlobStreams.serve(req, out, d -> images.blob(d).orElse(null), blocking,
                "this worker's image store");
    }

    // ---- sandboxes

    @Override
    public void createSandbox(CreateSandboxRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.claim(req).info());
    }

    @Override
    public void getSandbox(SandboxRef req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.get(req.getSandboxId()).info());
    }

    @Override
    public void listSandboxes(ListSandboxesRequest req, StreamObserver<ListSandboxesResponse> out) {
        unary(out, () -> {
            ListSandboxesResponse.Builder b = ListSandboxesResponse.newBuilder();
            pools.list(req.getOwner()).forEach(c -> b.addSandboxes(c.info()));
            return b.build();
        });
    }

    @Override
    public void killSandbox(SandboxRef req, StreamObserver<KillSandboxResponse> out) {
        unary(out, () -> {
            pools.kill(req.getSandboxId());
            return KillSandboxResponse.getDefaultInstance();
        });
    }

    @Override
    public void setTimeout(SetTimeoutRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.setTimeout(req.getSandboxId(), req.getTimeoutSeconds(), req.getEndAtMs()).info());
    }

    // ---- processes

    @Override
    public StreamObserver<ExecRequest> exec(StreamObserver<ExecEvent> responses) {
        ServerCallStreamObserver<ExecEvent> call = (ServerCallStreamObserver<ExecEvent>) responses;
        GrpcEventSink sink = new GrpcEventSink(call);
        ExecCall exec = new ExecCall(sink);
        call.setOnCancelHandler(exec::disconnected);
        return exec;
    }

    /** One Exec call: the first request starts the process, later ones feed it. */
    private final class ExecCall implements StreamObserver<ExecRequest> {
        private final GrpcEventSink sink;
        private volatile ManagedProcess process;
        private volatile boolean killOnDisconnect;
        private volatile boolean ended;

        ExecCall(GrpcEventSink sink) {
            this.sink = sink;
        }

        @Override
        public void onNext(ExecRequest req) {
            if (ended) {
                return;
            }
            try {
                if (req.getRequestCase() == ExecRequest.RequestCase.START) {
                    if (process != null) {
                        throw invalid("start may only be sent once per Exec call");
                    }
                    start(req.getStart());
                    return;
                }
                ManagedProcess p = process;
                if (p == null) {
                    throw invalid("the first Exec request must carry start");
                }
                switch (req.getRequestCase()) {
                    case STDIN -> p.writeStdin(req.getStdin().toByteArray());
                    case CLOSE_STDIN -> p.closeStdin();
                    case SIGNAL -> p.signal(signalNumber(req.getSignal()));
                    default -> throw invalid("empty Exec request");
                }
            } catch (StatusRuntimeException e) {
                ended = true;
                sink.fail(e);
            } catch (RuntimeException e) {
                ended = true;
                log.warn("exec failed", e);
                sink.fail(Status.INTERNAL.withDescription(e.toString()));
            }
        }

        private void start(ExecStart start) {
            ClaimedSandbox sandbox = pools.running(start.getSandboxId());
            ProcessConfig config = start.getProcess();
            if (config.getCmd().isEmpty()) {
                throw invalid("process.cmd is required");
            }
            Map<String, String> env = new LinkedHashMap<>(sandbox.effectiveEnv());
            env.putAll(config.getEnvsMap());
            String user = config.getUser().isEmpty() ? sandbox.runtime().defaultUser() : SandboxUsers.require(config.getUser());
            // no cwd: the template's WORKDIR (E2B's default workdir, docs/e2b-wire.md#sandbox-defaults), else the user's home
            String cwd = config.getCwd().isEmpty() && !sandbox.runtime().defaultWorkdir().isEmpty()
                    ? sandbox.runtime().defaultWorkdir()
                    : SandboxPaths.resolve(config.getCwd(), SandboxUsers.home(user), true, "cwd");
            TerminalSize pty = start.hasPty() ? new TerminalSize(start.getPty().getCols(), start.getPty().getRows()) : null;
            // a terminal's input is the stdin pipe
            LaunchSpec spec = new LaunchSpec(config.getCmd(), config.getArgsList(), env, cwd,
                    start.getStdin() || pty != null, pty, user);
            killOnDisconnect = start.getKillOnDisconnect();
            process = sandbox.processes().start(spec, config, start.getTag(), sink, start.getTimeoutMs());
        }

        @Override
        public void onError(Throwable t) {
            disconnected();
        }

        @Override
        public void onCompleted() {
            // half-close: the client sends no more input; output keeps flowing until exit
        }

        void disconnected() {
            ended = true;
            sink.cancelled();
            ManagedProcess p = process;
            if (p != null) {
                p.detach(sink);
                if (killOnDisconnect && p.isRunning()) {
                    p.signal(9);
                }
            }
        }
    }

    @Override
    public void attachProcess(AttachProcessRequest req, StreamObserver<ExecEvent> responses) {
        ServerCallStreamObserver<ExecEvent> call = (ServerCallStreamObserver<ExecEvent>) responses;
        try {
            ProcessRef ref = switch (req.getSelectorCase()) {
                case PID -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).setPid(req.getPid()).build();
                case TAG -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).setTag(req.getTag()).build();
                default -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).build(); // find() refuses it
            };
            ManagedProcess p = pools.running(req.getSandboxId()).processes().find(ref);
            GrpcEventSink sink = new GrpcEventSink(call);
            call.setOnCancelHandler(() -> {
                sink.cancelled();
                p.detach(sink);
            });
            if (!p.attach(sink, req.getReplay())) {
                throw ErrorReason.PROCESS_NOT_FOUND.exception(Status.Code.NOT_FOUND, "process " + p.pid() + " has exited");
            }
        } catch (RuntimeException e) {
            responses.onError(toStatus(e));
        }
    }

    @Override
    public void listProcesses(SandboxRef req, StreamObserver<ListProcessesResponse> out) {
        unary(out, () -> ListProcessesResponse.newBuilder()
                .addAllProcesses(pools.running(req.getSandboxId()).processes().list()).build());
    }

    @Override
    public void sendInput(SendInputRequest req, StreamObserver<SendInputResponse> out) {
        unary(out, () -> {
            ManagedProcess p = pools.running(req.getProcess().getSandboxId()).processes().find(req.getProcess());
            if (!req.getStdin().isEmpty()) {
                p.writeStdin(req.getStdin().toByteArray());
            }
            if (req.getCloseStdin()) {
                p.closeStdin();
            }
            return SendInputResponse.getDefaultInstance();
        });
    }

    @Override
    public void signalProcess(SignalProcessRequest req, StreamObserver<SignalProcessResponse> out) {
        unary(out, () -> {
            int sig = signalNumber(req.getSignal());
            pools.running(req.getProcess().getSandboxId()).processes().find(req.getProcess()).signal(sig);
            return SignalProcessResponse.getDefaultInstance();
        });
    }

    @Override
    public void updateProcess(UpdateProcessRequest req, StreamObserver<UpdateProcessResponse> out) {
        unary(out, () -> {
            if (!req.hasPty()) {
                throw invalid("pty (the new terminal size) is required");
            }
            TerminalSize size = new TerminalSize(req.getPty().getCols(), req.getPty().getRows());
            pools.running(req.getProcess().getSandboxId()).processes().find(req.getProcess()).resize(size);
            return UpdateProcessResponse.getDefaultInstance();
        });
    }

    // ---- ports

    @Override
    public StreamObserver<PortRequest> forwardPort(StreamObserver<PortResponse> responses) {
        return new PortForward((ServerCallStreamObserver<PortResponse>) responses,
                id -> pools.running(id).runtime(), blocking);
    }

    // ---- files

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
        return new StreamObserver<>() {
            private SandboxFiles.Write write;
            private String path;
            private long written;
            private boolean failed;

            @Override
            public void onNext(WriteFileRequest req) {
                if (failed) {
                    return;
                }
                try {
                    if (req.getRequestCase() == WriteFileRequest.RequestCase.PATH) {
                        if (write != null) {
                            throw invalid("path may only be sent once per WriteFile call");
                        }
                        String user = userOf(req.getPath().getSandboxId(), req.getPath().getUser());
                        SandboxFiles files = files(req.getPath().getSandboxId(), user);
                        path = SandboxPaths.resolve(req.getPath().getPath(), SandboxUsers.home(user), false, "path");
                        write = files.write(path);
                    } else if (req.getRequestCase() == WriteFileRequest.RequestCase.DATA) {
                        if (write == null) {
                            throw invalid("the first WriteFile request must carry path");
                        }
                        written += req.getData().size();
                        if (written > MAX_WRITE_BYTES) {
                            throw Status.RESOURCE_EXHAUSTED.withDescription("file exceeds " + MAX_WRITE_BYTES + " bytes")
                                    .asRuntimeException();
                        }
                        req.getData().writeTo(write.data());
                    }
                } catch (IOException e) {
                    // the writer died early; finish() reports why
                    fail(null);
                } catch (RuntimeException e) {
                    fail(e);
                }
            }

            private void fail(RuntimeException e) {
                if (e == null && write != null) {
                    try {
                        write.finish();
                        e = Status.INTERNAL.withDescription("write of '" + path + "' ended early").asRuntimeException();
                    } catch (RuntimeException mapped) {
                        e = mapped;
                    }
                }
                failed = true;
                if (write != null) {
                    write.close();
                }
                out.onError(toStatus(e));
            }

            @Override
            public void onError(Throwable t) {
                failed = true;
                if (write != null) {
                    write.close();
                }
            }

            @Override
            public void onCompleted() {
                if (failed) {
                    return;
                }
                if (write == null) {
                    out.onError(invalid("WriteFile needs a path request"));
                    return;
                }
                try {
                    EntryInfo info = write.finish();
                    out.onNext(info);
                    out.onCompleted();
                } catch (RuntimeException e) {
                    write.close();
                    out.onError(toStatus(e));
                }
            }
        };
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

    // ---- pause and resume, metrics (issue 14)

    @Override
    public void pauseSandbox(PauseSandboxRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.pause(req.getSandboxId(), req.getDropMemory()).info());
    }

    @Override
    public void resumeSandbox(ResumeSandboxRequest req, StreamObserver<ResumeSandboxResponse> out) {
        unary(out, () -> {
            SandboxPools.Resumed r = pools.resume(req.getSandboxId(), req.getTimeoutSeconds(), req.getEndAtMs(),
                    req.getDropMemory());
            return ResumeSandboxResponse.newBuilder().setSandbox(r.sandbox().info()).setResumed(r.resumed()).build();
        });
    }

    @Override
    public void getSandboxMetrics(SandboxMetricsRequest req, StreamObserver<SandboxMetricsResponse> out) {
        unary(out, () -> SandboxMetricsResponse.newBuilder()
                .addAllSamples(pools.metrics(req.getSandboxId(), req.getStartMs(), req.getEndMs())).build());
    }

    /** Stops the blocking executor; running calls end with their sandboxes. */
    public void shutdown() {
        blocking.shutdownNow();
    }

    // ---- snapshots and reset (issue 14)

    @Override
    public void createSnapshot(CreateSnapshotRequest req,
                               StreamObserver<SnapshotInfo> out) {
        unary(out, () -> requireSnapshots().create(req.getSandboxId(), req.getSnapshotId()));
    }

    @Override
    public void exportSnapshot(SnapshotRef req, StreamObserver<ExportedSnapshot> out) {
        // writing a layer blob reads and compresses the whole layer: off the gRPC executor
        blocking.execute(() -> unary(out, () -> requireSnapshots().export(req.getSnapshotId())));
    }

    @Override
    public void deleteSnapshot(SnapshotRef req,
                               StreamObserver<DeleteSnapshotResponse> out) {
        unary(out, () -> {
            requireSnapshots().delete(req.getSnapshotId());
            return DeleteSnapshotResponse.getDefaultInstance();
        });
    }

    @Override
    public void resetSandbox(SandboxRef req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> {
            ClaimedSandbox c;
            try {
                c = pools.get(req.getSandboxId());
            } catch (StatusRuntimeException e) {
                throw ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND,
                        e.getStatus().getDescription());
            }
            try {
                c.reset(); // serialized with pause and resume; refuses a paused sandbox
            } catch (StatusRuntimeException e) {
                if (!c.runtime().isAlive()) {
                    try {
                        pools.kill(c.id()); // the failed reset killed it: free its slot and record
                    } catch (StatusRuntimeException gone) {
                        // reaped meanwhile
                    }
                }
                throw e;
            }
            return c.info();
        });
    }

    private Snapshots requireSnapshots() {
        if (snapshots == null) {
            throw Status.FAILED_PRECONDITION.withDescription("this worker has no image store, so it keeps no snapshots")
                    .asRuntimeException();
        }
        return snapshots;
    }

    // ---- helpers

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

    private static int signalNumber(Signal s) {
        return switch (s) {
            case SIGNAL_SIGKILL -> 9;
            case SIGNAL_SIGTERM -> 15;
            default -> throw invalid("signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM");
        };
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    private static <T> void unary(StreamObserver<T> out, Supplier<T> body) {
        T result;
        try {
            result = body.get();
        } catch (RuntimeException e) {
            out.onError(toStatus(e));
            return;
        }
        out.onNext(result);
        out.onCompleted();
    }

    static StatusRuntimeException toStatus(RuntimeException e) {
        if (e instanceof StatusRuntimeException s) {
            return s;
        }
        log.warn("unexpected worker error", e);
        return Status.INTERNAL.withDescription(e.toString()).withCause(e).asRuntimeException();
    }

    /** worker.proto BuildTemplate: see {@link BuildService}. */
    @Override
    public StreamObserver<BuildInput> buildTemplate(
            StreamObserver<BuildEvent> responseObserver) {
        if (builds == null) {
            responseObserver.onError(Status.FAILED_PRECONDITION.withDescription("this worker cannot build templates: "
                    + "builds need the local runtime with an image store").asRuntimeException());
            return new StreamObserver<>() {
                @Override
                public void onNext(BuildInput value) {}

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }
        return builds.call(responseObserver);
    }
}
