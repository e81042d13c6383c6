package io.agentbox.manager.bench;

/** A benchmark step that failed; the message names the step and what the server answered. */
public final class BenchException extends RuntimeException {
    public BenchException(String message) {
        super(message);
    }
}
