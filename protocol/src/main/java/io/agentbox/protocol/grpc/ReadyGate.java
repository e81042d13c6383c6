package io.agentbox.protocol.grpc;

import io.grpc.stub.CallStreamObserver;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Lets a producer thread wait until a gRPC call can take another message (gRPC flow control), so a
 * slow peer holds back the producer instead of growing the call's buffer. Works for both ends: a
 * server call's responses and a client call's requests.
 *
 * <p>Wiring: point the call's on-ready handler at {@link #signal} (and a server call's on-cancel
 * handler at {@link #close} or {@link #signal}); then, before every {@code onNext}, the producer
 * calls {@link #awaitReady}. The wait re-checks every {@link #POLL_MS} ms as well, because
 * {@code isReady()} can turn true before its callback reaches the gate and because a stop
 * condition may change without a signal.
 *
 * <p>Stopping: {@link #awaitReady} returns false, at once or when it wakes, after {@link #close},
 * when the {@code stopped} condition given at construction holds, or when a server call was
 * cancelled. Thread-safe; any number of producers may wait.
 */
public final class ReadyGate {
    /** How often a waiting producer re-checks readiness and the stop conditions without a signal. */
    public static final long POLL_MS = 100;

    private final Object monitor;
    private final BooleanSupplier stopped;
    private volatile boolean closed;

    /** A gate with its own lock that stops only through {@link #close} or a server call's cancel. */
    public ReadyGate() {
        this(new Object(), () -> false);
    }

    /** A gate with its own lock that also stops while {@code stopped} answers true. */
    public ReadyGate(BooleanSupplier stopped) {
        this(new Object(), stopped);
    }

    /**
     * A gate that waits on {@code monitor}: a caller that guards its own state with that lock can
     * hold it around "await, then send" so that nothing it guards changes in between; the wait
     * releases the lock while it sleeps, as {@link Object#wait} does.
     */
    public ReadyGate(Object monitor, BooleanSupplier stopped) {
        this.monitor = Objects.requireNonNull(monitor, "monitor");
        this.stopped = Objects.requireNonNull(stopped, "stopped");
    }

    /** Wakes the waiting producers to re-check: call it from the call's on-ready handler. */
    public void signal() {
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    /** Stops every wait, now and later: {@link #awaitReady} returns false from here on. */
    public void close() {
        closed = true;
        signal();
    }

    /**
     * Waits until {@code call} is ready for another message or the gate stops.
     *
     * @return true when the caller may send now; false when the gate was closed, its stop
     *     condition holds, or {@code call} is a cancelled server call
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public boolean awaitReady(CallStreamObserver<?> call) throws InterruptedException {
        synchronized (monitor) {
            while (!stopped(call) && !call.isReady()) {
                monitor.wait(POLL_MS);
            }
            return !stopped(call);
        }
    }

    private boolean stopped(CallStreamObserver<?> call) {
        return closed || stopped.getAsBoolean() || call instanceof ServerCallStreamObserver<?> s && s.isCancelled();
    }
}
