package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.Json;
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
    private final EnvdContext ctx;

    FilesystemService(EnvdContext ctx) {
        this.ctx = ctx;
    }

    /** {@code ListDir {"path","depth"}} → {@code {"entries":[EntryInfo…]}}. */
    JsonNode listDir(SandboxTarget t, JsonNode req, Request request) {
        ListDirRequest r = ListDirRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setPath(path(req, "path")).setDepth((int) EnvdJson.unsigned(req, "depth", 64)).build();
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode entries = out.putArray("entries");
        for (EntryInfo e : call(t, request, s -> s.listDir(r)).getEntriesList()) {
            entries.add(EnvdJson.entryInfo(e));
        }
        return out;
    }

    /**
     * {@code WatchDir {"path","recursive"}} (server stream): {@code start{}} once the watch is in
     * place, then {@code filesystem{name,type}} per change and keepalives; ends at
     * {@code Connect-Timeout-Ms} (the SDK's {@code timeoutMs}, default 60 s) or when the client
     * stops it. Missing path → {@code not_found}; not a directory → {@code failed_precondition}.
     */
    void watchDir(SandboxTarget t, JsonNode req, Request request, Response response, Callback callback) {
        WatchDirRequest r = WatchDirRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setPath(path(req, "path"))
                .setRecursive(EnvdJson.field(req, "recursive").asBoolean(false)).build();
        FilesystemServiceGrpc.FilesystemServiceStub stub = FilesystemServiceGrpc.newStub(t.channel());
        long timeoutMs = ProcessService.timeoutMs(request);
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
        }
        stub.watchDir(r, new StreamRelay<>(ctx, t, request, response, callback, EnvdJson::watchEvent,
                EnvdJson.watchKeepalive()));
    }

    /** {@code Stat {"path"}} → {@code {"entry":EntryInfo}}. */
    JsonNode stat(SandboxTarget t, JsonNode req, Request request) {
        PathRequest r = pathRequest(t, req);
        return entry(call(t, request, s -> s.stat(r)));
    }

    /** {@code MakeDir {"path"}} → {@code {"entry":EntryInfo}}; existing → {@code already_exists}. */
    JsonNode makeDir(SandboxTarget t, JsonNode req, Request request) {
        PathRequest r = pathRequest(t, req);
        return entry(call(t, request, s -> s.makeDir(r)));
    }

    /** {@code Move {"source","destination"}} → {@code {"entry":EntryInfo}} of the destination. */
    JsonNode move(SandboxTarget t, JsonNode req, Request request) {
        MoveRequest r = MoveRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setSource(path(req, "source")).setDestination(path(req, "destination")).build();
        return entry(call(t, request, s -> s.move(r)));
    }

    /** {@code Remove {"path"}} → {@code {}}. */
    JsonNode remove(SandboxTarget t, JsonNode req, Request request) {
        PathRequest r = pathRequest(t, req);
        call(t, request, s -> s.remove(r));
        return Json.MAPPER.createObjectNode();
    }

    private static PathRequest pathRequest(SandboxTarget t, JsonNode req) {
        return PathRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user()).setPath(path(req, "path")).build();
    }

    /** The required path field {@code field}; empty → {@code invalid_argument}. */
    static String path(JsonNode req, String field) {
        String p = EnvdJson.string(req, field);
        if (p.isEmpty()) {
            throw EnvdJson.bad("field '" + field + "' is required");
        }
        return p;
    }

    private static ObjectNode entry(EntryInfo e) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.set("entry", EnvdJson.entryInfo(e));
        return out;
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
