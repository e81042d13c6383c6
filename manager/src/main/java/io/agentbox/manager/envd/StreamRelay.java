package io.agentbox.manager.envd;

import com.google.protobuf.Message;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.function.Function;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Relays a worker server stream ({@code Exec}, {@code AttachProcess}, {@code WatchDir}) to a
 * Connect server stream, one gRPC message requested per completed write (end-to-end
 * backpressure). After the first message a keepalive goes out every {@code
 * Keepalive-Ping-Interval} seconds of silence (docs/e2b-wire.md#keepalives). A client that goes
 * away cancels the worker call. Errors before the first message: a vanished sandbox is HTTP 502
 * (docs/e2b-wire.md#unknown-sandbox), anything else an end-of-stream error.
 *
 * @param <T> the worker's message type
 */
final class StreamRelay<T> implements ClientResponseObserver<Object, T> {
    private final EnvdContext ctx;
    private final SandboxTarget target;
    private final Response response;
    private final Callback callback;
    private final ConnectStreamWriter writer;
    private final long keepaliveSeconds;
    private final byte[] keepalive;
    private final Function<T, Message> toMessage;
    private volatile ClientCallStreamObserver<Object> call;

    /**
     * @param toMessage the envd response message for a worker message, or null to skip it
     * @param keepalive the service's keepalive message (its shape differs per stream)
     */
    StreamRelay(EnvdContext ctx, SandboxTarget target, Request request, Response response, Callback callback,
                Function<T, Message> toMessage, Message keepalive) {
        this.ctx = ctx;
        this.target = target;
        this.response = response;
        this.callback = callback;
        this.toMessage = toMessage;
        this.keepalive = EnvdCodec.print(keepalive);
        this.keepaliveSeconds = ProcessService.keepaliveSeconds(request);
        this.writer = new ConnectStreamWriter(response, callback, ctx.limits.streamQueue(), () -> {
            ClientCallStreamObserver<Object> c = call;
            ctx.relays.remove(this);
            if (c != null) {
                c.cancel("client disconnected", null);
            }
        });
        // silence between messages is normal for a stream; keepalives detect dead clients instead
        request.addIdleTimeoutListener(t -> false);
        ctx.relays.add(this);
    }

    String sandboxId() {
        return target.sandboxId();
    }

    /** Ends the stream with {@code error} and cancels the worker call (hub shutdown). */
    void abort(ConnectError error) {
        ctx.relays.remove(this);
        writer.end(error);
        ClientCallStreamObserver<Object> c = call;
        if (c != null) {
            c.cancel(error.message(), null);
        }
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<Object> requestStream) {
        this.call = requestStream;
        requestStream.disableAutoRequestWithInitial(1);
    }

    @Override
    public void onNext(T message) {
        Message out = toMessage.apply(message);
        boolean first = !writer.started();
        if (out == null) {
            call.request(1);
            return;
        }
        writer.message(EnvdCodec.print(out), () -> call.request(1));
        if (first) {
            writer.keepalive(ctx.timer, keepaliveSeconds, keepalive);
        }
    }

    @Override
    public void onError(Throwable t) {
        ctx.relays.remove(this);
        Status status = Status.fromThrowable(t);
        if (!writer.started() && ctx.sandboxUnreachable(target, t)) {
            ApiException e = EnvdContext.sandboxNotFound(target.sandboxId());
            HttpIo.json(response, callback, e.status(), e.body());
            return;
        }
        writer.end(ctx.workerError(target, status));
    }

    @Override
    public void onCompleted() {
        ctx.relays.remove(this);
        writer.end(null);
    }
}
