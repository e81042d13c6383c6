package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.TerminalSize;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A command started through nsenter. The host process is nsenter; its child runs the command
 * and, after {@code setsid}, leads the command's process group, so the child's host pid is the
 * host pgid we signal. nsenter exits with the command's code, or re-raises the signal that
 * killed it (Java then reports 128 + signal).
 */
final class NsProcess implements LaunchedProcess {
    /** How long the sandbox may take to report the pid of a new command. */
    static final long START_TIMEOUT_MS = 10_000;
    private static final int MAX_PID_LINE = 16;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nsenter-watchdog");
        t.setDaemon(true);
        return t;
    });

    private final LocalSandbox sandbox;
    private final Process process;
    private final int pid;
    private final long hostPgid;
    private final boolean stdinPipe;
    private final boolean pty;

    private NsProcess(LocalSandbox sandbox, Process process, int pid, long hostPgid, boolean stdinPipe, boolean pty) {
        this.stdinPipe = stdinPipe;
        this.pty = pty;
        this.sandbox = sandbox;
        this.process = process;
        this.pid = pid;
        this.hostPgid = hostPgid;
    }

    /** Reads the wrapper's pid line; maps "no pid" to INVALID_ARGUMENT (bad cwd) or UNAVAILABLE. */
    static NsProcess await(LocalSandbox sandbox, Process p, String cwd, boolean stdinPipe, boolean pty) {
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(p::destroyForcibly, START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        String line;
        try {
            line = readLine(p.getInputStream());
        } catch (IOException e) {
            line = null;
        } finally {
            watchdog.cancel(false);
        }
        if (line == null) {
            int code;
            try {
                code = p.waitFor(START_TIMEOUT_MS, TimeUnit.MILLISECONDS) ? p.exitValue() : -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                code = -1;
            }
            p.destroyForcibly();
            if (!sandbox.isAlive()) {
                throw sandbox.unavailable();
            }
            if (code == LocalSandbox.CWD_MISSING) {
                throw Status.INVALID_ARGUMENT.withDescription("cwd '" + cwd + "' does not exist").asRuntimeException();
            }
            throw Status.UNAVAILABLE.withDescription("cannot start process in sandbox " + sandbox.id() + " (exit "
                    + code + "): " + readSome(p.getErrorStream())).asRuntimeException();
        }
        int pid;
        try {
            pid = Integer.parseInt(line.trim());
        } catch (NumberFormatException e) {
            p.destroyForcibly();
            throw Status.INTERNAL.withDescription("unexpected pid line from sandbox: " + line).asRuntimeException();
        }
        // after the pid line the child exists; it is the command itself (exec chain, same pid)
        return new NsProcess(sandbox, p, pid, firstChild(p), stdinPipe, pty);
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
        if (hostPgid > 0 && process.isAlive()) {
            sandbox.killGroup(hostPgid, signal);
        }
    }

    @Override
    public boolean isPty() {
        return pty;
    }

    @Override
    public void resize(TerminalSize size) {
        if (!pty) {
            LaunchedProcess.super.resize(size);
        }
        if (!process.isAlive()) {
            throw Status.NOT_FOUND.withDescription("process " + pid + " has exited").asRuntimeException();
        }
        Terminal.resize(sandbox, pid, size);
    }

    /** Reads one short line byte by byte so that no command output is consumed with it. */
    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (sb.length() <= MAX_PID_LINE) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                return sb.toString();
            }
            sb.append((char) b);
        }
        return sb.toString();
    }

    static String readSome(InputStream in) {
        try {
            byte[] buf = in.readNBytes(2000);
            return new String(buf, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "(no output)";
        }
    }
}
