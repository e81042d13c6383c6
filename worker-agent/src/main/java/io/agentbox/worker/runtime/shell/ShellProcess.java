package io.agentbox.worker.runtime.shell;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.TerminalSize;
import io.grpc.Status;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * A command started with {@link ShellLaunch}: the carrier process (nsenter, a pod exec) whose
 * stdout continues after the pid line, plus a runtime-specific way to signal the command's group.
 */
public final class ShellProcess implements LaunchedProcess {
    private final Process process;
    private final int pid;
    private final boolean stdinPipe;
    private final IntConsumer signalGroup;
    private final Consumer<TerminalSize> resizePty;

    /** @param signalGroup sends a signal number to the command's process group */
    public ShellProcess(Process process, int pid, boolean stdinPipe, IntConsumer signalGroup) {
        this(process, pid, stdinPipe, signalGroup, null);
    }

    /** @param resizePty sets the size of the command's pty; null when it runs without one */
    public ShellProcess(Process process, int pid, boolean stdinPipe, IntConsumer signalGroup,
            Consumer<TerminalSize> resizePty) {
        this.process = process;
        this.pid = pid;
        this.stdinPipe = stdinPipe;
        this.signalGroup = signalGroup;
        this.resizePty = resizePty;
    }

    @Override
    public boolean isPty() {
        return resizePty != null;
    }

    @Override
    public void resize(TerminalSize size) {
        if (resizePty == null) {
            LaunchedProcess.super.resize(size);
            return;
        }
        if (!process.isAlive()) {
            throw ErrorReason.PROCESS_NOT_FOUND.exception(Status.Code.NOT_FOUND, "process " + pid + " has exited");
        }
        resizePty.accept(size);
    }

    @Override
    public int pid() {
        return pid;
    }

    @Override
    public InputStream stdout() {
        return process.getInputStream();
    }

    @Override
    public InputStream stderr() {
        return process.getErrorStream();
    }

    @Override
    public OutputStream stdin() {
        return stdinPipe ? process.getOutputStream() : null;
    }

    @Override
    public int waitFor() throws InterruptedException {
        return process.waitFor();
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void signalGroup(int signal) {
        if (process.isAlive()) {
            signalGroup.accept(signal);
        }
    }
}
