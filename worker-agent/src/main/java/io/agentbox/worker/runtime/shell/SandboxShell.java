package io.agentbox.worker.runtime.shell;

import io.grpc.StatusRuntimeException;
import java.util.List;

/** A way to run {@code /bin/sh} scripts inside one sandbox as the sandbox user. */
public interface SandboxShell {

    /**
     * Starts {@code argv} inside the sandbox.
     *
     * @param stdinPipe false: stdin is empty (/dev/null)
     * @throws StatusRuntimeException UNAVAILABLE when the sandbox is not running
     */
    Process start(List<String> argv, boolean stdinPipe);

    /** false once the sandbox is gone; failures are then reported as {@link #unavailable()}. */
    boolean isAlive();

    /** UNAVAILABLE naming the sandbox. */
    StatusRuntimeException unavailable();
}
