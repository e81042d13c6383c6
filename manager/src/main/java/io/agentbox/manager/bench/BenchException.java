package io.agentbox.manager.bench;

import java.time.Duration;

/** A benchmark step that failed; the message names the step and what the server answered. */
public final class BenchException extends RuntimeException {
    public BenchException(String message) {
        super(message);
    }

    /** Sleeps; an interrupt ends the benchmark with "interrupted". */
    static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }
}
