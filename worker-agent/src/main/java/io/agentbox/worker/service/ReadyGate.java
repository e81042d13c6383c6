package io.agentbox.worker.service;

import io.grpc.stub.ServerCallStreamObserver;

/** Lets a producer thread wait until a server call can take another message (gRPC flow control). */
final class ReadyGate {
    private static final long POLL_MS = 100;
    private boolean cancelled;

    synchronized void signal() {
        notifyAll();
    }

    synchronized void cancel() {
        cancelled = true;
        notifyAll();
    }

    /** @return false when the call was cancelled */
    synchronized boolean awaitReady(ServerCallStreamObserver<?> call) throws InterruptedException {
        while (!cancelled && !call.isReady()) {
            // isReady may flip without a callback reaching us first; poll as a safety net
            wait(POLL_MS);
        }
        return !cancelled && !call.isCancelled();
    }
}
