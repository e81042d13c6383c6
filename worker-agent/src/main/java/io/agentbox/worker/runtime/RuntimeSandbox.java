package io.agentbox.worker.runtime;

import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.unpack.UpperCapture;
import io.agentbox.worker.image.unpack.WhiteoutForm;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One started sandbox as the runtime sees it: a process tree plus a private filesystem layer.
 * Errors are {@link StatusRuntimeException}s with the codes of worker_common.proto.
 */
public interface RuntimeSandbox {

    String id();

    /** false once the sandbox was killed or its init process died. */
    boolean isAlive();

    /**
     * Starts a process inside the sandbox as {@link LaunchSpec#user()} and returns once it runs.
     *
     * @throws StatusRuntimeException INVALID_ARGUMENT when the cwd does not exist or an
     *     env name is malformed; NOT_FOUND + SANDBOX_NOT_FOUND when the sandbox is not running
     */
    LaunchedProcess launch(LaunchSpec spec);

    /** File operations performed with the sandbox user's rights (symlinks resolve inside). */
    SandboxFiles files();

    /**
     * File operations as {@code user} ("user", or "root" where the runtime has root inside).
     *
     * @throws StatusRuntimeException INVALID_ARGUMENT for another name; PERMISSION_DENIED
     *     for "root" in a runtime without root inside
     */
    default SandboxFiles files(String user) {
        if (user == null || user.isEmpty() || LaunchSpec.USER.equals(user)) {
            return files();
        }
        LaunchSpec.requireUser(user);
        throw noRootInside();
    }

    /** PERMISSION_DENIED for {@value LaunchSpec#ROOT} in a runtime without root inside. */
    static StatusRuntimeException noRootInside() {
        return Status.PERMISSION_DENIED.withDescription("this runtime runs sandbox commands and file operations "
                + "as '" + LaunchSpec.USER + "' only").asRuntimeException();
    }

    /**
     * Stops every process of the sandbox where it stands (the cgroup freezer): memory, pids and
     * open files stay, nothing runs until {@link #thaw()}. Idempotent.
     *
     * @throws StatusRuntimeException UNIMPLEMENTED where the runtime cannot freeze;
     *     NOT_FOUND + SANDBOX_NOT_FOUND when the sandbox is not running; UNAVAILABLE when the
     *     freeze did not complete
     */
    default void freeze() {
        throw Status.UNIMPLEMENTED.withDescription("this runtime cannot freeze sandboxes").asRuntimeException();
    }

    /**
     * Continues every process {@link #freeze()} stopped. Idempotent.
     *
     * @throws StatusRuntimeException as {@link #freeze()}
     */
    default void thaw() {
        throw Status.UNIMPLEMENTED.withDescription("this runtime cannot freeze sandboxes").asRuntimeException();
    }

    /**
     * The root file system the sandbox was started from: its image's layers (or a snapshot's) and
     * config; empty for the runtime's built-in root. Used to record snapshots.
     */
    default Optional<SandboxImage> image() {
        return Optional.empty();
    }

    /**
     * Copies the sandbox's writable layer (what it changed on top of its image) into {@code dest},
     * an empty directory, in the image store's layer form ({@code form}), stopping its processes
     * only for a moment; the sandbox keeps running with the same id and end time. Files only:
     * processes and memory are not part of it.
     *
     * @throws StatusRuntimeException UNIMPLEMENTED where the runtime cannot; UNAVAILABLE
     *     when the sandbox is not running; INTERNAL when the copy fails (naming the cause)
     */
    default UpperCapture.Result captureWritableLayer(Path dest,
            WhiteoutForm form) {
        throw Status.UNIMPLEMENTED.withDescription("this runtime cannot snapshot sandboxes").asRuntimeException();
    }

    /**
     * Returns the sandbox to the file system it was started with and fresh processes (every
     * process ends), keeping its id and network identity.
     *
     * @throws StatusRuntimeException UNIMPLEMENTED where the runtime cannot; UNAVAILABLE
     *     when the sandbox is not running or the reset failed (the sandbox is then gone)
     */
    default void reset() {
        throw Status.UNIMPLEMENTED.withDescription("this runtime cannot reset sandboxes").asRuntimeException();
    }

    /**
     * Kills every process of the sandbox but its init, keeping its files (a filesystem-only pause,
     * a reboot on resume), and returns once they are gone; the sandbox is thawed afterwards.
     *
     * @throws StatusRuntimeException UNIMPLEMENTED where the runtime cannot; UNAVAILABLE
     *     when the sandbox is not running or a process outlived the wait
     */
    default void killProcesses() {
        throw Status.UNIMPLEMENTED.withDescription("this runtime cannot drop a sandbox's processes")
                .asRuntimeException();
    }

    /**
     * What the sandbox uses now, for its metrics; null where the runtime cannot measure it (or the
     * sandbox has ended). Cheap: a few small reads, called every few seconds per sandbox.
     */
    default ResourceUsage usage() {
        return null;
    }

    /**
     * How many of the sandbox's processes the kernel's OOM killer ended at its memory limit, a
     * counter that only grows (it may restart from 0 when a reset gives the sandbox a new cgroup);
     * -1 where the runtime cannot tell. A few small reads.
     */
    default long oomKills() {
        return -1;
    }

    /** Kills every process of the sandbox and deletes every file it wrote; idempotent. */
    void kill();

    /**
     * The user commands and file operations act as when a request names none: a built template's
     * final USER ({@code user} or {@code root}; docs/e2b-wire.md#sandbox-defaults), else {@code user}.
     */
    default String defaultUser() {
        return LaunchSpec.USER;
    }

    /** The cwd of a command that names none: a built template's final WORKDIR; empty = the user's home. */
    default String defaultWorkdir() {
        return "";
    }

    /**
     * true when the sandbox survives its worker's shutdown (a pod a restarted worker adopts), so
     * shutdown must leave it alone instead of killing it.
     */
    default boolean outlivesWorker() {
        return false;
    }
}
