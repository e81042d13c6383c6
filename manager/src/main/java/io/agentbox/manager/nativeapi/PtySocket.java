package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.routing.MdcCalls;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.protocol.v1.PtySize;
import io.agentbox.protocol.v1.UpdateProcessRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.StatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One terminal over a WebSocket: when the socket opens, a login shell starts on a pseudo-terminal
 * in the sandbox (worker {@code Exec} with a pty, killed when the socket goes away). Frames from
 * the client are the terminal's input, except a text frame that is the JSON
 * {@code {"type":"resize","cols":N,"rows":M}}; the terminal's output goes back as binary frames,
 * one worker message at a time (the next is asked for once the last frame was sent). The socket
 * closes with status 1000 and reason {@code exit <code>} when the shell exits, 1011 when the
 * worker fails.
 *
 * <p>Threading: Jetty delivers one frame at a time per session; gRPC delivers one message at a time.
 * Public only because Jetty calls a listener's methods through public method handles.
 */
public final class PtySocket implements Session.Listener.AutoDemanding {
    private static final Logger LOG = LoggerFactory.getLogger(PtySocket.class);
    static final String SHELL = "/bin/bash";

    private final ControlCore.Target target;
    private final ExecStart start;
    private volatile Session session;
    private volatile StreamObserver<ExecRequest> input;
    private volatile ClientCallStreamObserver<ExecRequest> call;
    private volatile int pid;
    /** The upgrade request's MDC (its request id), for the worker call and the log lines of the socket's callbacks. */
    private final Map<String, String> mdc = MDC.getCopyOfContextMap();

    PtySocket(ControlCore.Target target, int cols, int rows, String user) {
        this.target = target;
        this.start = Commands.start(target.sandboxId(), io.agentbox.protocol.v1.ProcessConfig.newBuilder()
                        .setCmd(SHELL).addArgs("-i").addArgs("-l").putEnvs("TERM", "xterm-256color").setUser(user).build(),
                0, true, "")
                .setPty(PtySize.newBuilder().setCols(cols).setRows(rows)).setKillOnDisconnect(true).build();
    }

    @Override
    public void onWebSocketOpen(Session session) {
        MdcCalls.with(mdc, () -> open(session));
    }

    private void open(Session session) {
        this.session = session;
        input = ProcessServiceGrpc.newStub(target.channel()).exec(new ClientResponseObserver<ExecRequest, ExecEvent>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<ExecRequest> requestStream) {
                call = requestStream;
                requestStream.disableAutoRequestWithInitial(1);
            }

            @Override
            public void onNext(ExecEvent e) {
                switch (e.getEventCase()) {
                    case STARTED -> {
                        pid = e.getStarted().getPid();
                        call.request(1);
                    }
                    case PTY, STDOUT, STDERR -> {
                        ByteString data = e.getEventCase() == ExecEvent.EventCase.PTY ? e.getPty()
                                : e.getEventCase() == ExecEvent.EventCase.STDOUT ? e.getStdout() : e.getStderr();
                        session.sendBinary(data.asReadOnlyByteBuffer(), Callback.from(() -> call.request(1),
                                x -> call.cancel("socket write failed", x)));
                    }
                    case EXITED -> session.close(StatusCode.NORMAL, "exit " + e.getExited().getExitCode(), Callback.NOOP);
                    default -> call.request(1);
                }
            }

            @Override
            public void onError(Throwable t) {
                String why = t instanceof StatusRuntimeException s && s.getStatus().getDescription() != null
                        ? s.getStatus().getDescription() : t.toString();
                // a close reason is at most 123 bytes
                String reason = why.length() > 100 ? why.substring(0, 100) : why;
                session.close(StatusCode.SERVER_ERROR, reason, Callback.NOOP);
            }

            @Override
            public void onCompleted() {
                session.close(StatusCode.NORMAL, "ended", Callback.NOOP);
            }
        });
        input.onNext(ExecRequest.newBuilder().setStart(start).build());
    }

    @Override
    public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
        stdin(ByteString.copyFrom(payload));
        callback.succeed();
    }

    @Override
    public void onWebSocketText(String text) {
        MdcCalls.with(mdc, () -> text(text));
    }

    private void text(String text) {
        if (text.startsWith("{") && text.contains("\"resize\"")) {
            try {
                JsonNode n = Json.MAPPER.readTree(text);
                if ("resize".equals(n.path("type").asText())) {
                    resize(n.path("cols").asInt(), n.path("rows").asInt());
                    return;
                }
            } catch (IOException e) {
                // not a control message: typed text that looks like one
            }
        }
        stdin(ByteString.copyFrom(text, StandardCharsets.UTF_8));
    }

    private void stdin(ByteString bytes) {
        StreamObserver<ExecRequest> in = input;
        if (in != null && !bytes.isEmpty()) {
            in.onNext(ExecRequest.newBuilder().setStdin(bytes).build());
        }
    }

    private void resize(int cols, int rows) {
        if (cols < 1 || cols > PtyEndpoint.MAX_SIZE || rows < 1 || rows > PtyEndpoint.MAX_SIZE || pid == 0) {
            return; // a bad size is ignored rather than ending the terminal
        }
        try {
            ProcessServiceGrpc.newBlockingStub(target.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .updateProcess(UpdateProcessRequest.newBuilder()
                            .setProcess(ProcessRef.newBuilder().setSandboxId(target.sandboxId()).setPid(pid))
                            .setPty(PtySize.newBuilder().setCols(cols).setRows(rows)).build());
        } catch (StatusRuntimeException e) {
            LOG.debug("resize of pty {} in {} failed: {}", pid, target.sandboxId(), e.getStatus());
        }
    }

    @Override
    public void onWebSocketClose(int statusCode, String reason) {
        ClientCallStreamObserver<ExecRequest> c = call;
        if (c != null) {
            c.cancel("terminal closed", null); // kill_on_disconnect: the shell goes with it
        }
    }

    @Override
    public void onWebSocketError(Throwable cause) {
        onWebSocketClose(StatusCode.SERVER_ERROR, cause.toString());
    }
}
