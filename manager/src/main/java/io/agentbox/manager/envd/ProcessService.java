package io.agentbox.manager.envd;

import com.google.protobuf.Message;
import io.agentbox.protocol.envd.EnvdProcess;
import io.agentbox.protocol.v1.AttachProcessRequest;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ListProcessesResponse;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.agentbox.protocol.v1.UpdateProcessRequest;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * envd {@code process.Process} over the worker's {@code Exec}/{@code AttachProcess}/… RPCs
 * (docs/e2b-wire.md#process-service).
 *
 * <p>Streams ({@code Start}, {@code Connect}): the first message is {@code start{pid}}, then data,
 * keepalives (every {@code Keepalive-Ping-Interval} seconds of silence, default 90) and one
 * {@code end}, then the end-of-stream envelope. {@code Connect-Timeout-Ms} on {@code Start} is
 * the process's kill timeout. A client that disconnects does not kill the process. Errors before
 * the first message: a vanished sandbox is HTTP 502 (docs/e2b-wire.md#unknown-sandbox), anything else an end-of-stream error.
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
    void start(SandboxTarget target, byte[] body, Request request, Response response, Callback callback) {
        EnvdProcess.StartRequest req = EnvdCodec.parse(body, EnvdProcess.StartRequest.newBuilder()).build();
        long timeoutMs = timeoutMs(request);
        ExecStart.Builder start = ExecStart.newBuilder()
                .setSandboxId(target.sandboxId())
                .setProcess(EnvdJson.processConfig(req.getProcess()).toBuilder().setUser(target.user()))
                .setTimeoutMs(timeoutMs)
                // absent = legacy behaviour: stdin pipe kept open (docs/e2b-wire.md#stdin)
                .setStdin(!req.hasStdin() || req.getStdin())
                .setTag(req.getTag());
        if (req.hasPty()) {
            start.setPty(EnvdJson.ptySize(req.getPty())).setStdin(true); // a terminal's input is always open
        }
        ProcessServiceGrpc.ProcessServiceStub stub = ProcessServiceGrpc.newStub(target.channel());
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs + DEADLINE_GRACE_MS, TimeUnit.MILLISECONDS);
        }
        StreamObserver<ExecRequest> requests = stub.exec(relay(target, request, response, callback,
                event -> EnvdProcess.StartResponse.newBuilder().setEvent(event).build()));
        requests.onNext(ExecRequest.newBuilder().setStart(start).build());
    }

    /**
     * {@code POST /process.Process/Connect} {@code {"process":{pid|tag}[,"replay":bool]}}: attach to a
     * running process. Output from now on, like envd; the output kept while no client was attached
     * (at most 1 MiB) only with {@code "replay":true} (newer envd's field; SDK 2.51.0 never sends it).
     */
    void connect(SandboxTarget target, byte[] body, Request request, Response response, Callback callback) {
        EnvdProcess.ConnectRequest req = EnvdCodec.parse(body, EnvdProcess.ConnectRequest.newBuilder()).build();
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req.getProcess());
        AttachProcessRequest.Builder attach = AttachProcessRequest.newBuilder().setSandboxId(ref.getSandboxId())
                .setReplay(req.getReplay()); // absent or null: false
        if (ref.getSelectorCase() == ProcessRef.SelectorCase.PID) {
            attach.setPid(ref.getPid());
        } else {
            attach.setTag(ref.getTag());
        }
        long timeoutMs = timeoutMs(request);
        ProcessServiceGrpc.ProcessServiceStub stub = ProcessServiceGrpc.newStub(target.channel());
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
        }
        stub.attachProcess(attach.build(), relay(target, request, response, callback,
                event -> EnvdProcess.ConnectResponse.newBuilder().setEvent(event).build()));
    }

    /** A relay writing each worker event as {@code wrap(event)} (a {@code StartResponse} or {@code ConnectResponse}). */
    private StreamRelay<ExecEvent> relay(SandboxTarget target, Request request, Response response, Callback callback,
                                         Function<EnvdProcess.ProcessEvent, Message> wrap) {
        return new StreamRelay<>(ctx, target, request, response, callback, ev -> {
            EnvdProcess.ProcessEvent event = EnvdJson.processEvent(ev);
            return event == null ? null : wrap.apply(event);
        }, wrap.apply(EnvdJson.keepalive()));
    }

    // ---- unary ---------------------------------------------------------------------------------

    /** {@code List}: {@code {"processes":[ProcessInfo…]}}. */
    Message list(SandboxTarget target, byte[] body, Request request) {
        EnvdCodec.parse(body, EnvdProcess.ListRequest.newBuilder());
        ListProcessesResponse res = call(target, request, s -> s.listProcesses(
                SandboxRef.newBuilder().setSandboxId(target.sandboxId()).build()));
        EnvdProcess.ListResponse.Builder out = EnvdProcess.ListResponse.newBuilder();
        for (ProcessInfo p : res.getProcessesList()) {
            out.addProcesses(EnvdJson.processInfo(p));
        }
        return out.build();
    }

    /**
     * {@code SendInput}: {@code {"process":{pid|tag},"input":{"stdin"|"pty":"<b64>"}}} → {@code {}}.
     * A pty process reads its terminal input from the worker's stdin pipe, so both go there.
     */
    Message sendInput(SandboxTarget target, byte[] body, Request request) {
        EnvdProcess.SendInputRequest req = EnvdCodec.parse(body, EnvdProcess.SendInputRequest.newBuilder()).build();
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req.getProcess());
        call(target, request, s -> s.sendInput(SendInputRequest.newBuilder()
                .setProcess(ref).setStdin(EnvdJson.input(req.getInput())).build()));
        return EnvdProcess.SendInputResponse.getDefaultInstance();
    }

    /** {@code Update}: {@code {"process":{pid|tag},"pty":{"size":{"cols","rows"}}}} → {@code {}} (PTY resize). */
    Message update(SandboxTarget target, byte[] body, Request request) {
        EnvdProcess.UpdateRequest req = EnvdCodec.parse(body, EnvdProcess.UpdateRequest.newBuilder()).build();
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req.getProcess());
        if (!req.hasPty()) {
            return EnvdProcess.UpdateResponse.getDefaultInstance(); // nothing to change
        }
        UpdateProcessRequest update = UpdateProcessRequest.newBuilder()
                .setProcess(ref).setPty(EnvdJson.ptySize(req.getPty())).build();
        call(target, request, s -> s.updateProcess(update));
        return EnvdProcess.UpdateResponse.getDefaultInstance();
    }

    /** {@code CloseStdin}: {@code {"process":{pid|tag}}} → {@code {}}. */
    Message closeStdin(SandboxTarget target, byte[] body, Request request) {
        EnvdProcess.CloseStdinRequest req = EnvdCodec.parse(body, EnvdProcess.CloseStdinRequest.newBuilder()).build();
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req.getProcess());
        call(target, request, s -> s.sendInput(SendInputRequest.newBuilder()
                .setProcess(ref).setCloseStdin(true).build()));
        return EnvdProcess.CloseStdinResponse.getDefaultInstance();
    }

    /** {@code SendSignal}: {@code {"process":{pid|tag},"signal":"SIGNAL_SIGKILL"}} → {@code {}}; unknown pid → not_found. */
    Message sendSignal(SandboxTarget target, byte[] body, Request request) {
        EnvdProcess.SendSignalRequest req = EnvdCodec.parse(body, EnvdProcess.SendSignalRequest.newBuilder()).build();
        ProcessRef ref = EnvdJson.processRef(target.sandboxId(), req.getProcess());
        SignalProcessRequest signal = SignalProcessRequest.newBuilder()
                .setProcess(ref).setSignal(EnvdJson.signal(req)).build();
        call(target, request, s -> s.signalProcess(signal));
        return EnvdProcess.SendSignalResponse.getDefaultInstance();
    }

    private <T> T call(SandboxTarget target, Request request,
                       Function<ProcessServiceGrpc.ProcessServiceBlockingStub, T> fn) {
        long timeout = timeoutMs(request);
        try {
            return fn.apply(ProcessServiceGrpc.newBlockingStub(target.channel()).withDeadlineAfter(
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
            throw EnvdCodec.bad("Connect-Timeout-Ms must be an integer");
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
