package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ListProcessesResponse;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.Signal;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code /v1/sandboxes/{id}/commands} (docs/native-api.md#commands) over the worker's
 * {@code ProcessService}: run a command ({@code bash -l -c cmd}) and wait for it (JSON) or follow
 * its output as server-sent events ({@link CommandStream}); list the running ones; write to a
 * process's stdin; signal it.
 *
 * <p>Limits: a waited-for command's stdout and stderr keep their first {@value #MAX_OUTPUT} bytes
 * each ({@code "truncated": true} says more was cut); {@code timeoutSeconds} (default
 * {@value #DEFAULT_TIMEOUT_SECONDS}, 0 = none, at most 86400) kills the process when it elapses.
 */
final class CommandEndpoints implements NativeHandler.RouteFamily {
    static final int MAX_OUTPUT = 1 << 20;
    static final int DEFAULT_TIMEOUT_SECONDS = 60;
    static final int MAX_TIMEOUT_SECONDS = 86_400;
    /** Extra time the hub gives the worker to report a timed-out process before giving up itself. */
    static final long DEADLINE_GRACE_MS = 10_000;
    static final long UNARY_DEADLINE_MS = 60_000;
    static final int MAX_STDIN_BYTES = 1 << 20;

    /** {@code POST .../commands}. */
    record NewCommand(String cmd, Map<String, String> env, String cwd, String user, Long timeoutSeconds, Boolean stdin,
                      String tag) {
        NewCommand {
            env = env == null ? Map.of() : env;
        }
    }

    /** {@code POST .../commands/{pid}/stdin}: {@code data} (UTF-8) or {@code dataBase64}, and/or {@code eof} (close stdin). */
    record Input(String data, String dataBase64, Boolean eof) {}

    /** {@code POST .../commands/{pid}/signal}. */
    record SignalBody(String signal) {}

    private final ControlCore core;
    private final ScheduledExecutorService timer;

    CommandEndpoints(ControlCore core, ScheduledExecutorService timer) {
        this.core = core;
        this.timer = timer;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("POST", "/v1/sandboxes/{id}/commands", this::run);
        t.add("GET", "/v1/sandboxes/{id}/commands", this::list);
        t.add("POST", "/v1/sandboxes/{id}/commands/{pid}/stdin", this::stdin);
        t.add("POST", "/v1/sandboxes/{id}/commands/{pid}/signal", this::signal);
    }

    private ControlCore.Target target(V1Call c) {
        return core.target(SandboxEndpoints.actingFor(core, c.who(), c.param("id")), c.param("id"));
    }

    private Reply run(V1Call c) throws Exception {
        NewCommand b = c.body(NewCommand.class);
        if (b.cmd() == null || b.cmd().isBlank()) {
            throw V1Errors.of(400, "field 'cmd' is required: the command line bash runs");
        }
        InputText.value("field 'cmd'", b.cmd());
        InputText.env("env", b.env());
        if (b.cwd() != null) {
            InputText.value("field 'cwd'", b.cwd());
        }
        if (b.tag() != null) {
            InputText.value("field 'tag'", b.tag());
        }
        long timeoutSeconds = b.timeoutSeconds() == null ? DEFAULT_TIMEOUT_SECONDS : b.timeoutSeconds();
        if (timeoutSeconds < 0 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
            throw V1Errors.of(400, "field 'timeoutSeconds' must be between 0 (no limit) and " + MAX_TIMEOUT_SECONDS);
        }
        String user = Commands.user(b.user());
        ControlCore.Target target = target(c);
        long timeoutMs = timeoutSeconds * 1000;
        ExecStart.Builder start = Commands.start(target.sandboxId(), Commands.shell(b.cmd(), b.env(), b.cwd(), user),
                timeoutMs, Boolean.TRUE.equals(b.stdin()), b.tag());
        ProcessServiceGrpc.ProcessServiceStub stub = ProcessServiceGrpc.newStub(target.channel());
        if (timeoutMs > 0) {
            stub = stub.withDeadlineAfter(timeoutMs + DEADLINE_GRACE_MS, TimeUnit.MILLISECONDS);
        }
        String accept = c.request().getHeaders().get("Accept");
        if (accept != null && accept.contains("text/event-stream")) {
            CommandStream stream = new CommandStream(c.request(), c.response(), c.callback(), timer, target.sandboxId());
            StreamObserver<ExecRequest> requests = stub.exec(stream);
            requests.onNext(ExecRequest.newBuilder().setStart(start).build());
            return null; // the stream answers
        }
        return Reply.json(200, waitFor(stub, start, timeoutMs));
    }

    /** Runs the command and waits for its exit: {@code {pid, exitCode, stdout, stderr, truncated?, error?}}. */
    private static ObjectNode waitFor(ProcessServiceGrpc.ProcessServiceStub stub, ExecStart.Builder start, long timeoutMs)
            throws Exception {
        CompletableFuture<ObjectNode> done = new CompletableFuture<>();
        StreamObserver<ExecEvent> collect = new StreamObserver<>() {
            private final ByteArrayOutputStream out = new ByteArrayOutputStream();
            private final ByteArrayOutputStream err = new ByteArrayOutputStream();
            private long pid;
            private boolean truncated;

            @Override
            public void onNext(ExecEvent e) {
                switch (e.getEventCase()) {
                    case STARTED -> pid = e.getStarted().getPid();
                    case STDOUT -> keep(out, e.getStdout());
                    case STDERR -> keep(err, e.getStderr());
                    case EXITED -> {
                        ObjectNode o = Json.MAPPER.createObjectNode();
                        o.put("pid", pid);
                        exit(o, e.getExited());
                        o.put("stdout", out.toString(StandardCharsets.UTF_8));
                        o.put("stderr", err.toString(StandardCharsets.UTF_8));
                        if (truncated) {
                            o.put("truncated", true);
                        }
                        done.complete(o);
                    }
                    default -> { } // keepalives
                }
            }

            private void keep(ByteArrayOutputStream buf, ByteString data) {
                int room = MAX_OUTPUT - buf.size();
                if (data.size() > room) {
                    truncated = true;
                }
                byte[] kept = data.substring(0, Math.max(0, Math.min(room, data.size()))).toByteArray();
                buf.write(kept, 0, kept.length);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.completeExceptionally(V1Errors.of(502, "the worker ended the command's stream without its exit"));
            }
        };
        StreamObserver<ExecRequest> requests = stub.exec(collect);
        requests.onNext(ExecRequest.newBuilder().setStart(start).build());
        try {
            return timeoutMs > 0 ? done.get(timeoutMs + 2 * DEADLINE_GRACE_MS, TimeUnit.MILLISECONDS) : done.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StatusRuntimeException s) {
                throw V1Errors.fromWorker(s, "run command");
            }
            if (e.getCause() instanceof ApiException a) {
                throw a;
            }
            throw e;
        } catch (TimeoutException e) {
            requests.onError(io.grpc.Status.CANCELLED.withDescription("hub gave up waiting").asRuntimeException());
            throw V1Errors.of(504, "run command: the worker did not report the command's exit in time");
        }
    }

    /** {@code exitCode} and, for an exit that was not clean, {@code error} ("signal: killed"). */
    static void exit(ObjectNode o, ProcessExited x) {
        o.put("exitCode", x.getExitCode());
        if (!x.getError().isEmpty()) {
            o.put("error", x.getError());
        }
    }

    private Reply list(V1Call c) {
        ControlCore.Target target = target(c);
        ListProcessesResponse r = blocking(target).listProcesses(SandboxRef.newBuilder().setSandboxId(target.sandboxId()).build());
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode items = out.putArray("items");
        r.getProcessesList().forEach(p -> {
            ObjectNode o = items.addObject();
            o.put("pid", p.getPid());
            o.put("cmd", Commands.commandLine(p));
            if (!p.getTag().isEmpty()) {
                o.put("tag", p.getTag());
            }
        });
        return Reply.json(200, out);
    }

    private Reply stdin(V1Call c) {
        Input b = c.body(Input.class);
        if ((b.data() != null) == (b.dataBase64() != null) && !(b.data() == null && Boolean.TRUE.equals(b.eof()))) {
            throw V1Errors.of(400, "send exactly one of 'data' (UTF-8 text) and 'dataBase64', and/or 'eof': true");
        }
        byte[] bytes;
        if (b.dataBase64() != null) {
            try {
                bytes = Base64.getDecoder().decode(b.dataBase64());
            } catch (IllegalArgumentException e) {
                throw V1Errors.of(400, "field 'dataBase64' is not base64");
            }
        } else {
            bytes = b.data() == null ? new byte[0] : b.data().getBytes(StandardCharsets.UTF_8);
        }
        if (bytes.length > MAX_STDIN_BYTES) {
            throw V1Errors.of(413, "stdin data larger than " + MAX_STDIN_BYTES + " bytes; send it in pieces");
        }
        ControlCore.Target target = target(c);
        ProcessRef ref = ref(target, c.param("pid"));
        if (bytes.length > 0) {
            blocking(target).sendInput(SendInputRequest.newBuilder().setProcess(ref).setStdin(ByteString.copyFrom(bytes)).build());
        }
        if (Boolean.TRUE.equals(b.eof())) {
            blocking(target).sendInput(SendInputRequest.newBuilder().setProcess(ref).setCloseStdin(true).build());
        }
        return Reply.noContent();
    }

    private Reply signal(V1Call c) {
        SignalBody b = c.body(SignalBody.class);
        Signal signal = switch (b.signal() == null ? "" : b.signal()) {
            case "SIGTERM", "TERM" -> Signal.SIGNAL_SIGTERM;
            case "SIGKILL", "KILL" -> Signal.SIGNAL_SIGKILL;
            default -> throw V1Errors.of(400, "field 'signal' must be SIGTERM or SIGKILL");
        };
        ControlCore.Target target = target(c);
        blocking(target).signalProcess(SignalProcessRequest.newBuilder().setProcess(ref(target, c.param("pid")))
                .setSignal(signal).build());
        return Reply.noContent();
    }

    private static ProcessRef ref(ControlCore.Target target, String pid) {
        int n;
        try {
            n = Integer.parseInt(pid);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n <= 0) {
            throw V1Errors.of(400, "path parameter 'pid' must be a positive integer");
        }
        return ProcessRef.newBuilder().setSandboxId(target.sandboxId()).setPid(n).build();
    }

    private static ProcessServiceGrpc.ProcessServiceBlockingStub blocking(ControlCore.Target target) {
        return ProcessServiceGrpc.newBlockingStub(target.channel()).withDeadlineAfter(UNARY_DEADLINE_MS, TimeUnit.MILLISECONDS);
    }
}
