package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.agentbox.worker.runtime.shell.ShellProcess;
import java.io.IOException;

/**
 * A command started through nsenter. The host process is nsenter; its child runs the command
 * and, after {@code setsid}, leads the command's process group, so the child's host pid is the
 * host pgid we signal. nsenter exits with the command's code, or re-raises the signal that
 * killed it (Java then reports 128 + signal).
 */
final class NsProcess {
    private NsProcess() {}

    /** Reads the wrapper's pid line; maps "no pid" to INVALID_ARGUMENT (bad cwd) or UNAVAILABLE. */
    static ShellProcess await(LocalSandbox sandbox, Process p, String cwd, boolean stdinPipe, boolean pty) {
        int pid = ShellLaunch.awaitPid(p, cwd, sandbox);
        // after the pid line the child exists; it is the command itself (exec chain, same pid)
        long hostPgid = firstChild(p);
        return new ShellProcess(p, pid, stdinPipe, signal -> {
            if (hostPgid > 0) {
                sandbox.killGroup(hostPgid, signal);
            }
        }, pty ? size -> Terminal.resize(sandbox, pid, size) : null);
    }

    /**
     * The host pid of nsenter's child. {@code /proc/<pid>/task/<pid>/children} answers directly;
     * {@link ProcessHandle#children()} scans every process of the host, which costs milliseconds
     * per command on a busy worker, so it is only the fallback.
     */
    private static long firstChild(Process p) {
        try {
            String children = java.nio.file.Files.readString(java.nio.file.Path.of(
                    "/proc/" + p.pid() + "/task/" + p.pid() + "/children")).trim();
            if (!children.isEmpty()) {
                return Long.parseLong(children.split(" ")[0]);
            }
        } catch (IOException | NumberFormatException e) {
            // kernel without CONFIG_PROC_CHILDREN
        }
        return p.toHandle().children().mapToLong(ProcessHandle::pid).findFirst().orElse(-1);
    }
}
