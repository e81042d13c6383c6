package io.agentbox.manager.envd;

import com.google.protobuf.Message;
import io.agentbox.protocol.envd.EnvdFilesystem;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.MoveRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.WatchDirRequest;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * envd {@code filesystem.Filesystem} unary RPCs over the worker's file RPCs (docs/e2b-wire.md#filesystem-service).
 * Responses carry {@code EntryInfo} in envd's JSON shape; worker errors map to Connect codes
 * ({@code not_found} → {@code FileNotFoundError}, {@code already_exists} → {@code makeDir} false).
 */
final class FilesystemService {
    /** Deepest {@code ListDir} the hub passes on. */
    static final int MAX_DEPTH = 64;

    private final EnvdContext ctx;

    FilesystemService(EnvdContext ctx) {
        this.ctx = ctx;
    }

    /** {@code ListDir {"path","depth"}} → {@code {"entries":[EntryInfo…]}}. */
    Message listDir(SandboxTarget t, byte[] body, Request request) {
        EnvdFilesystem.ListDirRequest req = EnvdCodec.parse(body, EnvdFilesystem.ListDirRequest.newBuilder()).build();
        if (Integer.toUnsignedLong(req.getDepth()) > MAX_DEPTH) {
            throw EnvdCodec.bad("field 'depth' out of range");
        }
        ListDirRequest r = ListDirRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setPath(path(req.getPath(), "path")).setDepth(req.getDepth()).build();
        EnvdFilesystem.ListDirResponse.Builder out = EnvdFilesystem.ListDirResponse.newBuilder();
        for (EntryInfo e : call(t, request, s -> s.listDir(r)).getEntriesList()) {
            out.addEntries(EnvdJson.entryInfo(e));
        }
        return out.build();
    }

    /**
     * {@code WatchDir {"path","recursive"}} (server stream): {@code start{}} once the watch is in
     * place, then {@code filesystem{name,type}} per change and keepalives; ends at
     * {@code Connect-Timeout-Ms} (the SDK's {@code timeoutMs}, default 60 s) or when the client
     * stops it. Missing path → {@code not_found}; not a directory → {@code failed_precondition}.
     */
    void watchDir(SandboxTarget t, byte[] body, Request request, Response response, Callback callback) {
        EnvdFilesystem.WatchDirRequest req = EnvdCodec.parse(body, EnvdFilesystem.WatchDirRequest.newBuilder()).build();
        WatchDirRequest r = WatchDirRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setPath(path(req.getPath(), "path")).setRecursive(req.getRecursive()).build();
        FilesystemServiceGrpc.FilesystemServiceStub stub = FilesystemServiceGrpc.newStub(t.channel());
        long timeoutMs = ProcessService.timeoutMs(request);
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
        }
        stub.watchDir(r, new StreamRelay<>(ctx, t, request, response, callback, EnvdJson::watchEvent,
                EnvdJson.watchKeepalive()));
    }

    /** {@code Stat {"path"}} → {@code {"entry":EntryInfo}}. */
    Message stat(SandboxTarget t, byte[] body, Request request) {
        EnvdFilesystem.StatRequest req = EnvdCodec.parse(body, EnvdFilesystem.StatRequest.newBuilder()).build();
        PathRequest r = pathRequest(t, req.getPath());
        return EnvdFilesystem.StatResponse.newBuilder().setEntry(EnvdJson.entryInfo(call(t, request, s -> s.stat(r)))).build();
    }

    /** {@code MakeDir {"path"}} → {@code {"entry":EntryInfo}}; existing → {@code already_exists}. */
    Message makeDir(SandboxTarget t, byte[] body, Request request) {
        EnvdFilesystem.MakeDirRequest req = EnvdCodec.parse(body, EnvdFilesystem.MakeDirRequest.newBuilder()).build();
        PathRequest r = pathRequest(t, req.getPath());
        return EnvdFilesystem.MakeDirResponse.newBuilder().setEntry(EnvdJson.entryInfo(call(t, request, s -> s.makeDir(r))))
                .build();
    }

    /** {@code Move {"source","destination"}} → {@code {"entry":EntryInfo}} of the destination. */
    Message move(SandboxTarget t, byte[] body, Request request) {
        EnvdFilesystem.MoveRequest req = EnvdCodec.parse(body, EnvdFilesystem.MoveRequest.newBuilder()).build();
        MoveRequest r = MoveRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setSource(path(req.getSource(), "source")).setDestination(path(req.getDestination(), "destination")).build();
        return EnvdFilesystem.MoveResponse.newBuilder().setEntry(EnvdJson.entryInfo(call(t, request, s -> s.move(r)))).build();
    }

    /** {@code Remove {"path"}} → {@code {}}. */
    Message remove(SandboxTarget t, byte[] body, Request request) {
        EnvdFilesystem.RemoveRequest req = EnvdCodec.parse(body, EnvdFilesystem.RemoveRequest.newBuilder()).build();
        PathRequest r = pathRequest(t, req.getPath());
        call(t, request, s -> s.remove(r));
        return EnvdFilesystem.RemoveResponse.getDefaultInstance();
    }

    private static PathRequest pathRequest(SandboxTarget t, String path) {
        return PathRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user()).setPath(path(path, "path")).build();
    }

    /** {@code path}, the value of the required field {@code field}; empty → {@code invalid_argument}. */
    static String path(String path, String field) {
        if (path.isEmpty()) {
            throw EnvdCodec.bad("field '" + field + "' is required");
        }
        return path;
    }

    private <T> T call(SandboxTarget t, Request request, Function<FilesystemServiceGrpc.FilesystemServiceBlockingStub, T> fn) {
        long timeout = ProcessService.timeoutMs(request);
        try {
            return fn.apply(FilesystemServiceGrpc.newBlockingStub(t.channel()).withDeadlineAfter(
                    timeout > 0 ? timeout : EnvdContext.DEFAULT_UNARY_TIMEOUT_MS, TimeUnit.MILLISECONDS));
        } catch (StatusRuntimeException e) {
            throw ctx.rpcError(t, e);
        }
    }
}
