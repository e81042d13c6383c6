package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.invalid;
import static io.agentbox.worker.service.WorkerStatus.toStatus;

import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.WriteFileRequest;
import io.agentbox.worker.runtime.SandboxFiles;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.function.BiFunction;

/**
 * One FilesystemService.WriteFile call: the first request names the path, data chunks follow,
 * the client's half-close finishes the file and answers its {@link EntryInfo}. At most
 * {@link #MAX_WRITE_BYTES}; past it RESOURCE_EXHAUSTED.
 */
final class FileWrite implements StreamObserver<WriteFileRequest> {
    /** Largest file WriteFile accepts, in bytes. */
    static final long MAX_WRITE_BYTES = 1L << 30;

    /** The sandbox's files as the requesting user, and that user's home (relative paths resolve against it). */
    record Target(SandboxFiles files, String home) {
    }

    private final StreamObserver<EntryInfo> out;
    /** (sandbox id, requested user) to where the file goes; throws a status for an unknown sandbox or user. */
    private final BiFunction<String, String, Target> targets;
    private SandboxFiles.Write write;
    private String path;
    private long written;
    private boolean failed;

    FileWrite(StreamObserver<EntryInfo> out, BiFunction<String, String, Target> targets) {
        this.out = out;
        this.targets = targets;
    }

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
                Target target = targets.apply(req.getPath().getSandboxId(), req.getPath().getUser());
                path = SandboxPaths.resolve(req.getPath().getPath(), target.home(), false, "path");
                write = target.files().write(path);
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
}
