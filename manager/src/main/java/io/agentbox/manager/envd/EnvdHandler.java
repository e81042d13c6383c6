package io.agentbox.manager.envd;

import com.google.protobuf.Message;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.sandboxes.SandboxPauses;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.grpc.StatusRuntimeException;
import io.agentbox.manager.store.SandboxRecord;
import io.grpc.Channel;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * The envd data plane (docs/e2b-wire.md#surfaces-and-routing): routes a request to its sandbox by the
 * {@code E2b-Sandbox-Id} header (fallback: {@code Host: 49983-<id>.<domain>}), checks the
 * sandbox is alive (else 502, docs/e2b-wire.md#unknown-sandbox) and the {@code X-Access-Token} (else 401; {@code /health} is
 * open, {@code /files} also accepts a URL signature), then dispatches to the Connect services and
 * the {@code /files} and {@code /health} endpoints.
 */
public final class EnvdHandler {
    public static final int ENVD_PORT = 49983;
    public static final String SANDBOX_ID_HEADER = "E2b-Sandbox-Id";
    public static final String SANDBOX_PORT_HEADER = "E2b-Sandbox-Port";
    public static final String ACCESS_TOKEN_HEADER = "X-Access-Token";
    /** {@code Host: {port}-{sandboxId}.{domain}} (lowercased): group 1 the port, group 2 the sandbox id. */
    public static final Pattern SANDBOX_HOST = Pattern.compile("^(\\d{1,5})-([a-z0-9-]{1,63})\\..*");
    /** Connect server-streaming methods: requests and responses are enveloped. */
    private static final Set<String> STREAMS = Set.of("/process.Process/Start", "/process.Process/Connect",
            "/filesystem.Filesystem/WatchDir");
    private static final Set<String> REST_PATHS = Set.of("/files", "/health", "/envs", "/metrics", "/init", "/files/compose");
    /** Every Connect procedure {@link #handle} serves (metric labels: a bounded set). */
    private static final Set<String> RPCS = Set.of("/process.Process/Start", "/process.Process/Connect",
            "/process.Process/List", "/process.Process/SendInput", "/process.Process/SendSignal",
            "/process.Process/CloseStdin", "/process.Process/Update", "/filesystem.Filesystem/WatchDir",
            "/filesystem.Filesystem/ListDir", "/filesystem.Filesystem/Stat", "/filesystem.Filesystem/MakeDir",
            "/filesystem.Filesystem/Move", "/filesystem.Filesystem/Remove", "/filesystem.Filesystem/CreateWatcher",
            "/filesystem.Filesystem/GetWatcherEvents", "/filesystem.Filesystem/RemoveWatcher");

    private final ApiStore store;
    private final ClusterRouter router;
    private final EnvdTokens tokens;
    private final EnvdContext ctx;
    private final ProcessService process;
    private final FilesystemService filesystem;
    private final FilesEndpoint files;
    private final Watchers watchers;
    private final WorkerSandboxes workers;
    private final SandboxPauses pauses;

    public EnvdHandler(ApiStore store, ClusterRouter router, EnvdTokens tokens, Limits limits,
                       ScheduledExecutorService timer) {
        this.store = store;
        this.router = router;
        this.tokens = tokens;
        this.ctx = new EnvdContext(store, limits, timer, router);
        this.process = new ProcessService(ctx);
        this.filesystem = new FilesystemService(ctx);
        this.files = new FilesEndpoint(ctx);
        this.watchers = new Watchers(ctx);
        this.workers = new WorkerSandboxes(store, router);
        this.pauses = new SandboxPauses(store);
    }

    /**
     * Ends every open Connect stream with an {@code aborted} error saying the hub shuts down, so
     * clients learn why (instead of a bare connection reset); call before the server stops.
     *
     * @return how many streams were ended
     */
    public int shutdownStreams() {
        return ctx.shutdownStreams();
    }

    /**
     * The route label of an envd request's path: the path itself for a Connect procedure or REST
     * path of envd, null for anything else (unbounded input must not become a label).
     */
    public static String routeLabel(String path) {
        return RPCS.contains(path) || REST_PATHS.contains(path) ? path : null;
    }

    /** True for requests addressed to a sandbox's envd rather than the control plane. */
    public static boolean isEnvdRequest(Request request) {
        String path = request.getHttpURI().getPath();
        return request.getHeaders().get(SANDBOX_ID_HEADER) != null
                || path.startsWith("/process.Process/") || path.startsWith("/filesystem.Filesystem/")
                || REST_PATHS.contains(path)
                || hostMatch(request) != null;
    }

    /** Handles the request completely (including errors as JSON responses). */
    public void handle(Request request, Response response, Callback callback) throws IOException {
        String path = request.getHttpURI().getPath();
        String sandboxId = request.getHeaders().get(SANDBOX_ID_HEADER);
        // other ports were taken by PortRoute before this handler
        if (sandboxId == null && path.equals("/files") && hostMatch(request) == null) {
            sandboxId = signedFor(request);
        }
        if (sandboxId == null) {
            Matcher m = hostMatch(request);
            if (m == null) {
                throw ApiException.e2b(400, "missing " + SANDBOX_ID_HEADER + " header (or a Host of the form 49983-<sandboxID>.<domain>)");
            }
            sandboxId = m.group(2);
        }
        SandboxRecord record = workers.find(sandboxId).orElse(null);
        if (record == null) {
            throw EnvdContext.sandboxNotFound(sandboxId);
        }
        Channel channel = router.channel(record.clusterId());
        if (channel == null && (path.startsWith("/process.Process/") || path.startsWith("/filesystem.Filesystem/"))) {
            ConnectError e = EnvdContext.clusterDisconnected(sandboxId, record.clusterId());
            if (STREAMS.contains(path)) { // clients read a stream's error only from its end-of-stream envelope
                new ConnectStreamWriter(response, callback, 1, () -> { }).end(e);
                return;
            }
            throw e.toException();
        }
        if (channel == null) {
            ObjectNode body = Json.MAPPER.createObjectNode();
            body.put("sandboxId", sandboxId);
            body.put("message", "sandbox " + sandboxId + " is unreachable: its worker cluster '" + record.clusterId()
                    + "' is disconnected from the hub");
            body.put("code", 503);
            throw new ApiException(503, body);
        }
        SandboxTarget target = new SandboxTarget(sandboxId, record, channel, ""); // "": the sandbox's default user
        String method = request.getMethod();

        if (path.equals("/health") || record.lifecycle().autoResume()) {
            // the state decides before any call: a paused sandbox's envd is unreachable (502, as
            // E2B's proxy answers), unless auto-resume wakes it first (docs/e2b-wire.md#auto-pause-and-auto-resume)
            if (!running(target)) {
                throw EnvdContext.sandboxNotFound(sandboxId);
            }
        }
        if (path.equals("/health")) {
            HttpIo.empty(response, callback, 204);
            return;
        }
        if (path.equals("/files")) {
            Fields query = HttpIo.query(request);
            boolean read = "GET".equals(method);
            if (!"GET".equals(method) && !"POST".equals(method)) {
                throw ApiException.e2b(405, "use GET or POST on /files");
            }
            if (!tokens.verify(sandboxId, request.getHeaders().get(ACCESS_TOKEN_HEADER))
                    && !tokens.verifySignature(sandboxId, query.getValue("path"), read ? "read" : "write",
                    query.getValue("username"), query.getValue("signature"), query.getValue("signature_expiration"),
                    System.currentTimeMillis() / 1000)) {
                throw ApiException.e2b(401, "unauthorized access, please provide a valid access token or signature");
            }
            String user = query.getValue("username");
            if (!SandboxUser.isKnown(user)) {
                throw ApiException.e2b(401, SandboxUser.unknownMessage(user));
            }
            if (read) {
                files.download(target.as(user), query, response, callback);
            } else {
                files.upload(target.as(user), request, query, response, callback);
            }
            return;
        }
        if (path.startsWith("/process.Process/") || path.startsWith("/filesystem.Filesystem/")) {
            rpc(target, path, request, response, callback);
            return;
        }
        throw ApiException.e2b(404, "envd endpoint " + method + " " + path + " is not supported");
    }

    /**
     * Whether the sandbox runs, after resuming it when it is paused with auto-resume; false when it
     * is gone (recorded) or paused without auto-resume. A worker that cannot be asked counts as
     * running: the call itself then reports what is wrong.
     */
    private boolean running(SandboxTarget target) {
        try {
            return pauses.wake(target.channel(), target.record());
        } catch (StatusRuntimeException e) {
            return !ctx.sandboxUnreachable(target, e);
        }
    }

    private void rpc(SandboxTarget target, String path, Request request, Response response, Callback callback) {
        if (!"POST".equals(request.getMethod())) {
            // as connect-go: the method is wrong, not the procedure (405, not unimplemented's 501)
            response.getHeaders().put(HttpHeader.ALLOW, "POST");
            throw new ApiException(405, ConnectError.of(ConnectError.UNIMPLEMENTED, "Connect RPCs use POST, not "
                    + request.getMethod()).toJson());
        }
        if (!tokens.verify(target.sandboxId(), request.getHeaders().get(ACCESS_TOKEN_HEADER))) {
            throw ConnectError.of(ConnectError.UNAUTHENTICATED,
                    "unauthorized access, please provide a valid access token (X-Access-Token)").toException();
        }
        String contentType = String.valueOf(request.getHeaders().get(HttpHeader.CONTENT_TYPE)).toLowerCase();
        boolean stream = STREAMS.contains(path);
        String expected = stream ? ConnectStreamWriter.CONTENT_TYPE : "application/json";
        if (!contentType.startsWith(expected)) {
            ApiException e = ConnectError.of(ConnectError.INTERNAL,
                    "unsupported content type '" + contentType + "', expected " + expected).toException();
            throw new ApiException(415, e.body());
        }
        byte[] body = readRpcBody(request);
        if (stream) {
            try {
                SandboxTarget as = target.as(requireKnownUser(request));
                byte[] req = ConnectEnvelope.singleMessage(body);
                switch (path) {
                    case "/process.Process/Start" -> process.start(as, req, request, response, callback);
                    case "/process.Process/Connect" -> process.connect(as, req, request, response, callback);
                    default -> filesystem.watchDir(as, req, request, response, callback);
                }
            } catch (ApiException e) {
                if (!e.body().path("code").isTextual()) {
                    throw e; // an HTTP-level error (e.g. 502 for a sandbox that is gone)
                }
                // Clients only read Connect errors of a stream from its end-of-stream envelope.
                new ConnectStreamWriter(response, callback, 1, () -> { })
                        .end(ConnectError.of(e.body().path("code").asText(), e.body().path("message").asText()));
            }
            return;
        }
        target = target.as(requireKnownUser(request));
        byte[] req = body;
        Message result;
        switch (path) {
            case "/process.Process/List": result = process.list(target, req, request); break;
            case "/process.Process/SendInput": result = process.sendInput(target, req, request); break;
            case "/process.Process/SendSignal": result = process.sendSignal(target, req, request); break;
            case "/process.Process/CloseStdin": result = process.closeStdin(target, req, request); break;
            case "/process.Process/Update": result = process.update(target, req, request); break;
            case "/filesystem.Filesystem/ListDir": result = filesystem.listDir(target, req, request); break;
            case "/filesystem.Filesystem/Stat": result = filesystem.stat(target, req, request); break;
            case "/filesystem.Filesystem/MakeDir": result = filesystem.makeDir(target, req, request); break;
            case "/filesystem.Filesystem/Move": result = filesystem.move(target, req, request); break;
            case "/filesystem.Filesystem/Remove": result = filesystem.remove(target, req, request); break;
            case "/filesystem.Filesystem/CreateWatcher": result = watchers.create(target, req); break;
            case "/filesystem.Filesystem/GetWatcherEvents": result = watchers.events(target, req); break;
            case "/filesystem.Filesystem/RemoveWatcher": result = watchers.remove(target, req); break;
            default:
                throw ConnectError.of(ConnectError.UNIMPLEMENTED, path.substring(1) + " is not supported").toException();
        }
        HttpIo.json(response, callback, 200, EnvdCodec.print(result));
    }

    /**
     * The sandbox whose access token signed this {@code /files} URL, or null. With
     * {@code E2B_SANDBOX_URL} set, {@code uploadUrl()}/{@code downloadUrl()} carry neither the
     * routing header nor a sandbox host name (docs/e2b-wire.md#surfaces-and-routing), only the signature; it is
     * unforgeable without the token, so at most one live sandbox matches. Costs one HMAC per
     * live sandbox.
     *
     * @throws ApiException 401 when the URL is signed but by no live sandbox (tampered or expired)
     */
    private String signedFor(Request request) {
        Fields query = HttpIo.query(request);
        String signature = query.getValue("signature");
        if (signature == null) {
            return null;
        }
        String operation = "GET".equals(request.getMethod()) ? "read" : "write";
        long now = System.currentTimeMillis() / 1000;
        for (SandboxRecord r : store.activeSandboxes(null)) {
            if (tokens.verifySignature(r.sandboxId(), query.getValue("path"), operation, query.getValue("username"),
                    signature, query.getValue("signature_expiration"), now)) {
                return r.sandboxId();
            }
        }
        throw ApiException.e2b(401, "invalid or expired signature: it matches no running sandbox");
    }

    /**
     * The user of an RPC, from its {@code Authorization: Basic} header (none = the default).
     *
     * @throws ApiException Connect {@code unauthenticated} "user 'X' does not exist ..." for a user
     *     sandboxes do not have, as envd answers
     */
    private static String requireKnownUser(Request request) {
        String user = SandboxUser.fromBasicAuth(request.getHeaders().get(HttpHeader.AUTHORIZATION));
        if (!SandboxUser.isKnown(user)) {
            throw ConnectError.of(ConnectError.UNAUTHENTICATED, SandboxUser.unknownMessage(user)).toException();
        }
        return user;
    }

    private byte[] readRpcBody(Request request) {
        try {
            return HttpIo.readBody(request, ctx.limits.rpcBody());
        } catch (ApiException e) {
            // same status, Connect-shaped body: too large, or a body that could not be read intact
            String code = e.status() == 413 ? ConnectError.RESOURCE_EXHAUSTED
                    : e.status() == 408 ? ConnectError.DEADLINE_EXCEEDED : ConnectError.INVALID_ARGUMENT;
            throw new ApiException(e.status(), ConnectError.of(code, e.getMessage()).toJson());
        }
    }

    private static Matcher hostMatch(Request request) {
        String host = request.getHeaders().get(HttpHeader.HOST);
        if (host == null) {
            return null;
        }
        Matcher m = SANDBOX_HOST.matcher(host.toLowerCase());
        return m.matches() ? m : null;
    }
}
