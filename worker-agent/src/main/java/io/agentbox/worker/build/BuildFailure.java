package io.agentbox.worker.build;

/**
 * A build that ended in error: the message E2B clients show ({@code BuildError(reason.message)})
 * and the step it happened in, numbered as E2B does (docs/e2b-wire.md#build-status-and-logs: {@code "base"},
 * {@code "1"}..{@code "n"}, {@code "finalize"}).
 */
public final class BuildFailure extends Exception {
    private final String step;

    public BuildFailure(String step, String message) {
        super(message);
        this.step = step;
    }

    public BuildFailure(String step, String message, Throwable cause) {
        super(message, cause);
        this.step = step;
    }

    /** {@code "base"}, a step number from 1, or {@code "finalize"}. */
    public String step() {
        return step;
    }
}
