package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.HttpIo;
import io.agentbox.manager.api.Json;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ListProcessesResponse;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.agentbox.protocol.v1.WorkerServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * envd {@code process.Process} over the worker's {@code Exec}/{@code AttachProcess}/… RPCs
 * (e2b-protocol.md §4.2).
 *
 * <p>Streams ({@code Start}, {@code Connect}): the first message is {@code start{pid}}, then data,
 * keepalives (every {@code Keepalive-Ping-Interval} seconds of silence, default 90) and one
 * {@code end}, then the end-of-stream envelope. {@code Connect-Timeout-Ms} on {@code Start} is
 * the process's kill timeout. A client that disconnects does not kill the process. Errors before
 * the first message: a vanished sandbox is HTTP 502 (§4.5), anything else an end-of-stream error.
 */
final class ProcessService {
    static final long DEFAULT_KEEPALIVE_SECONDS = 90;
    static final long MAX_KEEPALIVE_SECONDS = 3600;
    /** Extra time the hub gives the worker to report a timed-out process before giving up itself. */
    static final long DEADLINE_GRACE_MS = 10_000;

    private final EnvdContext ctx;

    ProcessService(EnvdContext ctx) {
        this.ctx = ctx;
    }

    // ---- streams -------------------------------------------------------------------------------

    /** {@code POST /process.Process/Start}: body = one envelope holding a {@code StartRequest}. */
    void start(SandboxTarget target, JsonNode req, Request request, Response response, Callback callback) {
        if (!EnvdJson.field(req, "pty").isMissingNode()) {
            throw ConnectError.of(ConnectError.UNIMPLEMENTED, "PTY processes are not supported").toException();
        }
        long timeoutMs = timeoutMs(request);
        JsonNode stdin = EnvdJson.field(req, "stdin");
        ExecStart.Builder start = ExecStart.newBuilder()
                .setSandboxId(target.sandboxId())
                .setProcess(EnvdJson.processConfig(EnvdJson.object(req, "process")))
                .setTimeoutMs(timeoutMs)
                // absent = legacy behaviour: stdin pipe kept open (§4.2 rule 11)
                .setStdin(!stdin.isBoolean() || stdin.booleanValue())
                .setTag(EnvdJson.string(req, "tag"));
        WorkerServiceGrpc.WorkerServiceStub stub = WorkerServiceGrpc.newStub(target.channel());
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs + DEADLINE_GRACE_MS, TimeUnit.MILLISECONDS);
        }
        Relay relay = new Relay(target, request, response, callback);
        StreamObserver<ExecRequest> requests = stub.exec(relay);
        requests.onNext(ExecRequest.newBuilder().setStart(start).build());
    }

    /** {@code POST /process.Process/Connect}: attach to a running process by pid or tag. */
    void connect(SandboxTarget target, JsonNode req, Request request, Response response, Callback callback) {
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req);
        long timeoutMs = timeoutMs(request);
        WorkerServiceGrpc.WorkerServiceStub stub = WorkerServiceGrpc.newStub(target.channel());
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
        }
        stub.attachProcess(ref, new Relay(target, request, response, callback));
    }

    /** Relays worker {@code ExecEvent}s to a Connect stream, one gRPC message per completed write. */
    private final class Relay implements ClientResponseObserver<Object, ExecEvent> {
        private final SandboxTarget target;
        private final Response response;
        private final Callback callback;
        private final ConnectStreamWriter writer;
        private final long keepaliveSeconds;
        private volatile ClientCallStreamObserver<Object> call;

        Relay(SandboxTarget target, Request request, Response response, Callback callback) {
            this.target = target;
            this.response = response;
            this.callback = callback;
            this.keepaliveSeconds = keepaliveSeconds(request);
            this.writer = new ConnectStreamWriter(response, callback, ctx.limits.streamQueue(), () -> {
                ClientCallStreamObserver<Object> c = call;
                if (c != null) {
                    c.cancel("client disconnected", null);
                }
            });
            // silence between output is normal for a stream; keepalives detect dead clients instead
            request.addIdleTimeoutListener(t -> false);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Object> requestStream) {
            this.call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
        }

        @Override
        public void onNext(ExecEvent event) {
            ObjectNode json = EnvdJson.processEvent(event);
            boolean first = !writer.started();
            if (json == null) {
                call.request(1);
                return;
            }
            writer.message(json, () -> call.request(1));
            if (first) {
                writer.keepalive(ctx.timer, keepaliveSeconds);
            }
        }

        @Override
        public void onError(Throwable t) {
            Status status = Status.fromThrowable(t);
            if (!writer.started() && status.getCode() == Status.Code.NOT_FOUND && ctx.sandboxGone(target)) {
                ApiException e = EnvdContext.sandboxNotFound(target.sandboxId());
                HttpIo.json(response, callback, e.status(), e.body());
                return;
            }
            writer.end(ConnectError.fromGrpc(status));
        }

        @Override
        public void onCompleted() {
            writer.end(null);
        }
    }

    // ---- unary ---------------------------------------------------------------------------------

    /** {@code List}: {@code {"processes":[ProcessInfo…]}}. */
    JsonNode list(SandboxTarget target, JsonNode req, Request request) {
        ListProcessesResponse res = call(target, request, s -> s.listProcesses(
                SandboxRef.newBuilder().setSandboxId(target.sandboxId()).build()));
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode arr = out.putArray("processes");
        for (ProcessInfo p : res.getProcessesList()) {
            arr.add(EnvdJson.processInfo(p));
        }
        return out;
    }

    /** {@code SendInput}: {@code {"process":{pid|tag},"input":{"stdin":"<b64>"}}} → {@code {}}. */
    JsonNode sendInput(SandboxTarget target, JsonNode req, Request request) {
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req);
        ObjectNode input = EnvdJson.object(req, "input");
        if (!EnvdJson.field(input, "pty").isMissingNode()) {
            throw ConnectError.of(ConnectError.UNIMPLEMENTED, "PTY input is not supported").toException();
        }
        byte[] data = EnvdJson.bytes(input, "stdin");
        call(target, request, s -> s.sendInput(SendInputRequest.newBuilder()
                .setProcess(ref).setStdin(ByteString.copyFrom(data)).build()));
        return Json.MAPPER.createObjectNode();
    }

    /** {@code CloseStdin}: {@code {"process":{pid|tag}}} → {@code {}}. */
    JsonNode closeStdin(SandboxTarget target, JsonNode req, Request request) {
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req);
        call(target, request, s -> s.sendInput(SendInputRequest.newBuilder()
                .setProcess(ref).setCloseStdin(true).build()));
        return Json.MAPPER.createObjectNode();
    }

    /** {@code SendSignal}: {@code {"process":{pid|tag},"signal":"SIGNAL_SIGKILL"}} → {@code {}}; unknown pid → not_found. */
    JsonNode sendSignal(SandboxTarget target, JsonNode req, Request request) {
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req);
        SignalProcessRequest signal = SignalProcessRequest.newBuilder()
                .setProcess(ref).setSignal(EnvdJson.signal(req)).build();
        call(target, request, s -> s.signalProcess(signal));
        return Json.MAPPER.createObjectNode();
    }

    private <T> T call(SandboxTarget target, Request request,
                       java.util.function.Function<WorkerServiceGrpc.WorkerServiceBlockingStub, T> fn) {
        long timeout = timeoutMs(request);
        try {
            return fn.apply(WorkerServiceGrpc.newBlockingStub(target.channel()).withDeadlineAfter(
                    timeout > 0 ? timeout : EnvdContext.DEFAULT_UNARY_TIMEOUT_MS, TimeUnit.MILLISECONDS));
        } catch (StatusRuntimeException e) {
            throw ctx.rpcError(target, e);
        }
    }

    // ---- headers -------------------------------------------------------------------------------

    /** {@code Connect-Timeout-Ms}: milliseconds, 0 or absent = no limit. */
    static long timeoutMs(Request request) {
        String v = request.getHeaders().get("Connect-Timeout-Ms");
        if (v == null || v.isBlank()) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(v.trim()));
        } catch (NumberFormatException e) {
            throw EnvdJson.bad("Connect-Timeout-Ms must be an integer");
        }
    }

    /** {@code Keepalive-Ping-Interval}: seconds, default 90, clamped to 1..3600. */
    static long keepaliveSeconds(Request request) {
        String v = request.getHeaders().get("Keepalive-Ping-Interval");
        if (v == null || v.isBlank()) {
            return DEFAULT_KEEPALIVE_SECONDS;
        }
        try {
            return Math.min(MAX_KEEPALIVE_SECONDS, Math.max(1, Long.parseLong(v.trim())));
        } catch (NumberFormatException e) {
            return DEFAULT_KEEPALIVE_SECONDS;
        }
    }
}
