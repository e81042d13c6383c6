package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.RequestIds;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays a worker's {@code Exec} stream as server-sent events: {@code start {pid}} as soon as the
 * process runs, {@code stdout {data}} and {@code stderr {data}} as output arrives (UTF-8 text,
 * characters split across chunks kept whole), then {@code end {exitCode, error?}}. One worker
 * message is asked for per written event, so a slow client slows the relay, not the hub's memory.
 * A worker error before the first event is answered as a plain error envelope with its status;
 * after it, as a last {@code error {code, message, requestId}} event. A client that goes away
 * cancels the worker call; the process keeps running (list it, signal it).
 *
 * <p>Logs (with the request's id, see {@link io.agentbox.manager.routing.MdcCalls}): the exit at
 * debug level, a worker failure after the first event as a warning (the client only sees its
 * {@code error} event).
 */
final class CommandStream implements ClientResponseObserver<ExecRequest, ExecEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(CommandStream.class);
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final String sandboxId;
    private final SseStream sse;
    private final Utf8Chunks out = new Utf8Chunks();
    private final Utf8Chunks err = new Utf8Chunks();
    private volatile ClientCallStreamObserver<ExecRequest> call;
    private volatile boolean started;
    private volatile long pid;

    CommandStream(Request request, Response response, Callback callback, ScheduledExecutorService timer, String sandboxId) {
        this.request = request;
        this.sandboxId = sandboxId;
        this.response = response;
        this.callback = callback;
        this.sse = new SseStream(request, response, callback, timer, () -> {
            ClientCallStreamObserver<ExecRequest> c = call;
            if (c != null) {
                c.cancel("client went away", null);
            }
        });
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<ExecRequest> requestStream) {
        this.call = requestStream;
        requestStream.disableAutoRequestWithInitial(1);
    }

    @Override
    public void onNext(ExecEvent e) {
        Runnable next = () -> call.request(1);
        ObjectNode data = Json.MAPPER.createObjectNode();
        switch (e.getEventCase()) {
            case STARTED -> {
                started = true;
                pid = e.getStarted().getPid();
                sse.event("start", data.put("pid", e.getStarted().getPid()), next);
            }
            case STDOUT -> sse.event("stdout", data.put("data", out.decode(e.getStdout().toByteArray())), next);
            case STDERR -> sse.event("stderr", data.put("data", err.decode(e.getStderr().toByteArray())), next);
            case EXITED -> {
                CommandEndpoints.exit(data, e.getExited());
                LOG.debug("sandbox {}: streamed command pid {} ended with exit code {}{}", sandboxId, pid,
                        e.getExited().getExitCode(), e.getExited().getError().isEmpty() ? "" : " (" + e.getExited().getError() + ")");
                sse.end("end", data);
            }
            default -> next.run(); // keepalives: the SSE stream has its own
        }
    }

    @Override
    public void onError(Throwable t) {
        io.agentbox.manager.http.ApiException e = t instanceof StatusRuntimeException s
                ? V1Errors.fromWorker(s, "run command") : V1Errors.of(500, "run command failed: " + t.getClass().getSimpleName());
        if (!started && sse.abandon()) {
            NativeHandler.fail(request, response, callback, e);
            return;
        }
        LOG.warn("sandbox {}: the worker failed streamed command pid {} after it started: {}", sandboxId, pid, e.getMessage());
        sse.end("error", V1Errors.envelope(e, RequestIds.of(request)).get("error"));
    }

    @Override
    public void onCompleted() {
        sse.end(null, null); // after the end event this adds nothing
    }
}
