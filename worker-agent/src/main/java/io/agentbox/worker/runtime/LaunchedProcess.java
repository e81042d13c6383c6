package io.agentbox.worker.runtime;

import io.grpc.Status;
import java.io.InputStream;
import java.io.OutputStream;

/** A process started inside a sandbox, seen from the worker. */
public interface LaunchedProcess {

    /** Pid inside the sandbox's pid namespace (what clients see and address). */
    int pid();

    InputStream stdout();

    InputStream stderr();

    /** The stdin pipe, or {@code null} when the process was started with stdin = /dev/null. */
    OutputStream stdin();

    /**
     * Blocks until the process ends.
     *
     * @return the exit code, or 128 + signal number when it was killed by a signal
     */
    int waitFor() throws InterruptedException;

    boolean isAlive();

    /** Sends {@code signal} (e.g. 9, 15) to the process's whole process group; no-op once it ended. */
    void signalGroup(int signal);

    /** True when the process runs on a pseudo-terminal: {@link #stdout()} is the terminal's output. */
    default boolean isPty() {
        return false;
    }

    /**
     * Sets the window size of the process's terminal (TIOCSWINSZ; the foreground job gets SIGWINCH).
     *
     * @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION when the process has no pty
     */
    default void resize(TerminalSize size) {
        throw Status.FAILED_PRECONDITION.withDescription("process " + pid() + " was not started with a pty")
                .asRuntimeException();
    }
}
