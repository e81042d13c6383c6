package io.agentbox.worker.service;

import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.worker.process.EventSink;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayDeque;

/**
 * Delivers process events to one server-streaming gRPC call, respecting the call's flow control:
 * events wait in a queue until the transport is ready; producers are held back (see
 * {@link #awaitCapacity}) while more than {@link #MAX_QUEUED_BYTES} are queued. The call is
 * completed after the {@code exited} event.
 */
final class GrpcEventSink implements EventSink {
    static final long MAX_QUEUED_BYTES = 4L * 1024 * 1024;

    private final ServerCallStreamObserver<ExecEvent> call;
    // guarded by this
    private final ArrayDeque<ExecEvent> queue = new ArrayDeque<>();
    private long queuedBytes;
    private boolean done;

    GrpcEventSink(ServerCallStreamObserver<ExecEvent> call) {
        this.call = call;
        call.setOnReadyHandler(this::drain);
    }

    @Override
    public void enqueue(ExecEvent event) {
        synchronized (this) {
            if (done) {
                return;
            }
            queue.addLast(event);
            queuedBytes += event.getSerializedSize();
        }
        drain();
    }

    @Override
    public synchronized boolean awaitCapacity(long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!done && queuedBytes > MAX_QUEUED_BYTES) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return !done;
    }

    @Override
    public void abandon(String reason) {
        fail(Status.RESOURCE_EXHAUSTED.withDescription(reason));
    }

    /** Ends the call with an error (e.g. the start failed); later events are dropped. */
    void fail(Status status) {
        fail(status.asRuntimeException());
    }

    /** As {@link #fail(Status)}, keeping the error's trailers (its {@link io.agentbox.protocol.ErrorReason}). */
    synchronized void fail(StatusRuntimeException error) {
        if (done) {
            return;
        }
        done = true;
        queue.clear();
        queuedBytes = 0;
        notifyAll();
        if (!call.isCancelled()) {
            call.onError(error);
        }
    }

    /** The client went away: stop delivering. */
    synchronized void cancelled() {
        done = true;
        queue.clear();
        queuedBytes = 0;
        notifyAll();
    }

    private synchronized void drain() {
        while (!done && !queue.isEmpty() && call.isReady()) {
            ExecEvent e = queue.pollFirst();
            queuedBytes -= e.getSerializedSize();
            if (call.isCancelled()) {
                done = true;
                break;
            }
            call.onNext(e);
            if (e.hasExited()) {
                done = true;
                call.onCompleted();
            }
        }
        notifyAll();
    }
}
