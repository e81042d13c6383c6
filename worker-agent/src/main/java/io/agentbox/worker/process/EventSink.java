package io.agentbox.worker.process;

import io.agentbox.protocol.v1.ExecEvent;

/** Receives the events of one process for one client (an Exec or AttachProcess call). */
public interface EventSink {

    /** Queues an event without blocking; the last event of a process is always {@code exited}. */
    void enqueue(ExecEvent event);

    /**
     * Blocks until the queued bytes drop under the sink's limit (back-pressure for the output
     * readers).
     *
     * @return false when the client stayed too slow or went away; the sink is then dropped
     */
    boolean awaitCapacity(long timeoutMs) throws InterruptedException;

    /** Ends the client call because it was dropped (too slow). */
    void abandon(String reason);
}
