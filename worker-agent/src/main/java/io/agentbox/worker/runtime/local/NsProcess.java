package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.shell.SandboxShell;
import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.agentbox.worker.runtime.shell.ShellProcess;

/**
 * A command started through {@code nsenter} + {@code crun exec}. The host process is crun (nsenter
 * execs it); its child runs the command and, after {@code setsid}, leads the command's process
 * group, so the child's host pid is the host pgid we signal. crun exits with the command's code,
 * or 128 + the signal that killed it.
 */
final class NsProcess {
    private NsProcess() {}

    /** Reads the wrapper's pid line; maps "no pid" to INVALID_ARGUMENT (bad cwd) or UNAVAILABLE. */
    static ShellProcess await(LocalSandbox sandbox, SandboxShell shell, Process p, String cwd, boolean stdinPipe,
                              boolean pty, String user) {
        int pid = ShellLaunch.awaitPid(p, cwd, shell);
        // after the pid line the child exists; it is the command itself (exec chain, same pid)
        long hostPgid = ProcFs.childWithNsPid(p.pid(), pid);
        return new ShellProcess(p, pid, stdinPipe, signal -> {
            if (hostPgid > 0) {
                sandbox.killGroup(hostPgid, signal);
            }
        }, pty ? size -> Terminal.resize(sandbox, pid, size, user) : null);
    }
}
