package io.agentbox.manager.ports;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.sandboxes.SandboxPauses;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.PortOpen;
import io.agentbox.protocol.v1.PortRequest;
import io.agentbox.protocol.v1.PortResponse;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.PortServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Forwards HTTP requests (and protocol upgrades such as WebSocket) for a user port of a sandbox
 * ({@link PortRoute}) to the owning worker's {@code ForwardPort} stream over the tunnel.
 *
 * <p>Plain requests go to the sandbox's server as HTTP/1.0 with {@code Connection: close}, so the
 * response is never chunked and ends when the server closes: the hub relays status, headers and
 * body bytes unchanged except hop-by-hop fields (RFC 9110 §7.6.1). Upgrade requests go as
 * HTTP/1.1; after a 101 the client's connection becomes a raw byte tunnel
 * ({@link TunnelConnection}).
 *
 * <p>Like E2B's default ({@code allowPublicTraffic}), user ports need no credentials: the
 * sandbox id (unguessable) is the capability. Only sandboxes with a network namespace of their
 * own ({@code isolated} and {@code none} templates) are served (403 otherwise): a {@code host}-network sandbox shares its ports with the
 * worker host and every other host-network sandbox, so forwarding "its" port could reach another
 * tenant's server. Errors follow E2B's proxy: 502 JSON {@code {"sandboxId","message","code":502}}
 * for an unknown sandbox or a closed port.
 */
public final class PortProxy {
    /** How long the worker may take to connect to the port. */
    static final long CONNECT_TIMEOUT_MS = 15_000;
    /** Largest request body buffered when the client sent it chunked (HTTP/1.0 needs a length). */
    static final int MAX_BUFFERED_BODY = 16 << 20;
    private static final int CHUNK_BYTES = 64 * 1024;
    private static final String HOST_NETWORK = "host";
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-connection",
            "transfer-encoding", "te", "trailer", "upgrade", "proxy-authenticate", "proxy-authorization",
            "e2b-sandbox-id", "e2b-sandbox-port");

    private final ApiStore store;
    private final ClusterRouter router;
    /** Finds sandboxes and wakes those paused with auto-resume; one each per proxy (they hold nothing per request). */
    private final WorkerSandboxes workers;
    private final SandboxPauses pauses;

    public PortProxy(ApiStore store, ClusterRouter router) {
        this.store = store;
        this.router = router;
        this.workers = new WorkerSandboxes(store, router);
        this.pauses = new SandboxPauses(store);
    }

    /** Handles the request completely; errors before the response started are thrown as {@link ApiException}. */
    public void handle(PortRoute route, Request request, Response response, Callback callback) {
        SandboxRecord record = workers.find(route.sandboxId())
                .orElseThrow(() -> proxyError(route, "The sandbox was not found"));
        // a template deleted since counts as host: its sandboxes' network is no longer known
        String network = store.template(record.template()).map(Template::getNetwork).orElse(HOST_NETWORK);
        if (HOST_NETWORK.equals(network)) {
            throw ApiException.e2b(403, "sandbox ports are forwarded only for templates with network 'isolated' or 'none'; template '"
                    + record.template() + "' shares the host's network, where a port is not the sandbox's own "
                    + "(agentbox standalone --sandbox-network isolated)");
        }
        Channel channel = router.channel(record.clusterId());
        if (channel == null) {
            throw ApiException.e2b(503, "the sandbox's worker cluster '" + record.clusterId() + "' is not connected");
        }
        if (record.lifecycle().autoResume()) { // traffic wakes a sandbox paused with auto-resume (docs/e2b-wire.md#auto-pause-and-auto-resume)
            try {
                if (!pauses.wake(channel, record)) {
                    throw proxyError(route, "The sandbox is paused");
                }
            } catch (StatusRuntimeException e) {
                throw proxyError(route, ErrorReason.SANDBOX_NOT_FOUND.in(e) ? "The sandbox was not found"
                        : "cannot resume the sandbox: " + e.getStatus().getDescription());
            }
        }
        boolean upgrade = isUpgrade(request);
        byte[] body = null;
        long length = request.getLength();
        if (!upgrade && request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING)) {
            body = HttpIo.readBody(request, MAX_BUFFERED_BODY);
            length = body.length;
        }
        Exchange exchange = new Exchange(route, request, response, callback, upgrade);
        StreamObserver<PortRequest> upstream = PortServiceGrpc.newStub(channel).forwardPort(exchange);
        upstream.onNext(PortRequest.newBuilder().setOpen(PortOpen.newBuilder()
                .setSandboxId(route.sandboxId()).setPort(route.port())).build());
        exchange.awaitConnected();
        try {
            exchange.send(head(route, request, upgrade, Math.max(0, length)));
            if (body != null) {
                exchange.send(body);
            } else if (!upgrade && length > 0) {
                try (InputStream in = Content.Source.asInputStream(request)) {
                    byte[] buf = new byte[CHUNK_BYTES];
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        exchange.send(Arrays.copyOf(buf, n));
                    }
                }
            }
        } catch (IOException e) {
            if (exchange.finished) {
                return; // the sandbox already answered (or failed) and the response was written
            }
            exchange.call.cancel("client request body failed", e);
            throw new UncheckedIOException("cannot read request body", e);
        }
    }

    private static boolean isUpgrade(Request request) {
        String connection = request.getHeaders().get(HttpHeader.CONNECTION);
        return request.getHeaders().get(HttpHeader.UPGRADE) != null && connection != null
                && connection.toLowerCase(Locale.ROOT).contains("upgrade");
    }

    /** The request head sent to the sandbox's server. */
    private static byte[] head(PortRoute route, Request request, boolean upgrade, long length) {
        StringBuilder h = new StringBuilder(request.getMethod()).append(' ').append(route.target())
                .append(upgrade ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
        for (HttpField f : request.getHeaders()) {
            String name = f.getName().toLowerCase(Locale.ROOT);
            if (!HOP_BY_HOP.contains(name) && !name.equals("content-length")) {
                h.append(f.getName()).append(": ").append(f.getValue()).append("\r\n");
            }
        }
        if (upgrade) {
            h.append("Connection: Upgrade\r\nUpgrade: ").append(request.getHeaders().get(HttpHeader.UPGRADE)).append("\r\n");
        } else {
            h.append("Connection: close\r\n");
            if (length > 0) {
                h.append("Content-Length: ").append(length).append("\r\n");
            }
        }
        return h.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    static ApiException proxyError(PortRoute route, String message) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("sandboxId", route.sandboxId());
        body.put("port", route.port());
        body.put("message", message);
        body.put("code", 502);
        return new ApiException(502, body);
    }

    /** One forwarded request: the worker stream's observer and the sender of request bytes. */
    private static final class Exchange implements ClientResponseObserver<PortRequest, PortResponse> {
        private final PortRoute route;
        private final Request request;
        private final Response response;
        private final Callback callback;
        private final boolean upgrade;
        private final CompletableFuture<Void> connected = new CompletableFuture<>();
        private ClientCallStreamObserver<PortRequest> call;
        private byte[] headBuf = new byte[4096];
        private int headLen;
        private boolean headDone;
        private volatile TunnelConnection tunnel;
        /** The client's response completed or failed (or became a tunnel): no more request bytes. */
        private volatile boolean finished;
        private final ReadyGate ready = new ReadyGate(() -> finished);

        Exchange(PortRoute route, Request request, Response response, Callback callback, boolean upgrade) {
            this.route = route;
            this.request = request;
            this.response = response;
            this.callback = callback;
            this.upgrade = upgrade;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<PortRequest> requestStream) {
            this.call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
            requestStream.setOnReadyHandler(() -> {
                ready.signal();
                TunnelConnection t = tunnel;
                if (t != null) {
                    t.upstreamReady();
                }
            });
        }

        void awaitConnected() {
            try {
                connected.get(CONNECT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                Status s = Status.fromThrowable(e.getCause());
                throw proxyError(route, switch (s.getCode()) {
                    case NOT_FOUND -> "The sandbox was not found";
                    case FAILED_PRECONDITION -> "The sandbox is running but port is not open";
                    default -> "cannot reach port " + route.port() + ": " + s.getDescription();
                });
            } catch (TimeoutException e) {
                call.cancel("connect timeout", null);
                throw proxyError(route, "connecting to port " + route.port() + " timed out");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                call.cancel("interrupted", e);
                throw ApiException.e2b(503, "interrupted");
            }
        }

        /** Sends bytes to the sandbox, waiting while the gRPC stream is not ready (backpressure). */
        void send(byte[] data) throws IOException {
            try {
                if (!ready.awaitReady(call)) { // its poll re-checks `finished`
                    throw new IOException("the exchange with the sandbox already ended");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            call.onNext(PortRequest.newBuilder().setData(ByteString.copyFrom(data)).build());
        }

        @Override
        public void onNext(PortResponse message) {
            if (message.hasConnected()) {
                connected.complete(null);
                call.request(1);
                return;
            }
            byte[] data = message.getData().toByteArray();
            TunnelConnection t = tunnel;
            if (t != null) {
                t.toClient(data, () -> call.request(1));
                return;
            }
            if (headDone) {
                response.write(false, ByteBuffer.wrap(data), Callback.from(() -> call.request(1), this::clientFailed));
                return;
            }
            if (headLen + data.length > headBuf.length) {
                headBuf = Arrays.copyOf(headBuf, Math.min(HttpHead.MAX_BYTES + CHUNK_BYTES,
                        Math.max(headBuf.length * 2, headLen + data.length)));
            }
            System.arraycopy(data, 0, headBuf, headLen, data.length);
            headLen += data.length;
            HttpHead head;
            try {
                head = HttpHead.parse(headBuf, headLen);
            } catch (IllegalArgumentException e) {
                call.cancel("bad response", e);
                fail(proxyError(route, "the server on port " + route.port() + " sent an invalid response: " + e.getMessage()));
                return;
            }
            if (head == null) {
                call.request(1);
                return;
            }
            headDone = true;
            headBuf = null;
            response.setStatus(head.status());
            for (String[] f : head.fields()) {
                String name = f[0].toLowerCase(Locale.ROOT);
                if (!HOP_BY_HOP.contains(name) || head.status() == 101 && (name.equals("upgrade") || name.equals("connection"))) {
                    response.getHeaders().add(f[0], f[1]);
                }
            }
            if (head.status() == 101 && upgrade) {
                TunnelConnection conn = new TunnelConnection(request.getConnectionMetaData().getConnection().getEndPoint(),
                        request.getComponents().getExecutor(), call, head.leftover(), () -> call.request(1));
                request.setAttribute(HttpStream.UPGRADE_CONNECTION_ATTRIBUTE, conn);
                tunnel = conn;
                finished = true;
                callback.succeeded();
                return;
            }
            response.write(false, ByteBuffer.wrap(head.leftover()), Callback.from(() -> call.request(1), this::clientFailed));
        }

        private void clientFailed(Throwable x) {
            call.cancel("client went away", x);
            finished = true;
            callback.failed(x);
        }

        @Override
        public void onError(Throwable t) {
            if (!connected.isDone()) {
                connected.completeExceptionally(t);
                return;
            }
            TunnelConnection conn = tunnel;
            if (conn != null) {
                conn.close();
                return;
            }
            fail(proxyError(route, "connection to port " + route.port() + " failed: " + Status.fromThrowable(t).getDescription()));
        }

        @Override
        public void onCompleted() {
            TunnelConnection conn = tunnel;
            if (conn != null) {
                conn.sandboxClosed();
                return;
            }
            if (!headDone) {
                fail(proxyError(route, "the server on port " + route.port() + " closed the connection without a response"));
                return;
            }
            finished = true;
            response.write(true, null, callback);
        }

        private void fail(ApiException e) {
            finished = true;
            if (response.isCommitted()) {
                callback.failed(e);
            } else {
                response.getHeaders().clear();
                HttpIo.json(response, callback, e.status(), e.body());
            }
        }
    }
}
