package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.agentbox.worker.runtime.shell.ShellProcess;

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
        long hostPgid = ProcFs.firstChild(p.pid());
        return new ShellProcess(p, pid, stdinPipe, signal -> {
            if (hostPgid > 0) {
                sandbox.killGroup(hostPgid, signal);
            }
        }, pty ? size -> Terminal.resize(sandbox, pid, size) : null);
    }
}
