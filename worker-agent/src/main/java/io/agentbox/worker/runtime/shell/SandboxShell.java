package io.agentbox.worker.runtime.shell;

import io.grpc.StatusRuntimeException;
import java.util.List;

/** A way to run {@code /bin/sh} scripts inside one sandbox as the sandbox user. */
public interface SandboxShell {

    /**
     * Starts {@code argv} inside the sandbox.
     *
     * @param stdinPipe false: stdin is empty (/dev/null)
     * @throws StatusRuntimeException NOT_FOUND + SANDBOX_NOT_FOUND when the sandbox is not running
     */
    Process start(List<String> argv, boolean stdinPipe);

    /** false once the sandbox is gone; failures are then reported as {@link #unavailable()}. */
    boolean isAlive();

    /** NOT_FOUND + SANDBOX_NOT_FOUND naming the sandbox: it is gone for good. */
    StatusRuntimeException unavailable();
}
