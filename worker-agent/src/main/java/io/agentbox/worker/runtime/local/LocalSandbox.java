package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.EnvVars;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxFiles;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One bubblewrap sandbox of the {@link LocalRuntime}. */
final class LocalSandbox implements RuntimeSandbox {
    static final String HOME = "/home/user";
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** Exit code of the launch wrapper when the cwd cannot be entered. */
    static final int CWD_MISSING = 97;
    /** Runs in the sandbox: enter the cwd, report our pid, become a process group leader, exec. */
    private static final String WRAPPER =
            "cd -- \"$1\" 2>/dev/null || exit " + CWD_MISSING + "; echo $$; shift; exec setsid \"$@\"";
    /** Bytes of argv + env we pass to one command; the kernel's own limit is about 2 MiB. */
    private static final int MAX_ARG_BYTES = 512 * 1024;

    private static final Logger log = LoggerFactory.getLogger(LocalSandbox.class);

    private final String id;
    private final LocalRuntime runtime;
    private final LayerDirs layer;
    private final Process bwrap;
    /** The sandbox's `sleep infinity`: its namespaces are the ones we enter. */
    private final ProcessHandle init;
    private final LocalFiles files;
    private volatile boolean killed;

    LocalSandbox(String id, LocalRuntime runtime, LayerDirs layer, Process bwrap, ProcessHandle init) {
        this.id = id;
        this.runtime = runtime;
        this.layer = layer;
        this.bwrap = bwrap;
        this.init = init;
        this.files = new LocalFiles(this);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public boolean isAlive() {
        return !killed && init.isAlive();
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    /** Host directory mounted at /home/user (tests and diagnostics only). */
    java.nio.file.Path hostHome() {
        return layer.home;
    }

    @Override
    public LaunchedProcess launch(LaunchSpec spec) {
        List<String> inner = new ArrayList<>();
        inner.add("env");
        inner.add("-i");
        inner.add("HOME=" + HOME);
        inner.add("USER=user");
        inner.add("LOGNAME=user");
        inner.add("PATH=" + DEFAULT_PATH);
        EnvVars.requireValid(spec.env());
        for (Map.Entry<String, String> e : spec.env().entrySet()) {
            inner.add(e.getKey() + "=" + e.getValue());
        }
        inner.addAll(List.of("/bin/sh", "-c", WRAPPER, "sh", spec.cwd()));
        inner.addAll(spec.pty() == null ? command(spec) : Terminal.wrap(command(spec), spec.pty()));
        checkArgs(inner);
        Process p = nsenter(inner, spec.stdin());
        return NsProcess.await(this, p, spec.cwd(), spec.stdin(), spec.pty() != null);
    }

    private static List<String> command(LaunchSpec spec) {
        List<String> argv = new ArrayList<>();
        argv.add(spec.cmd());
        argv.addAll(spec.args());
        return argv;
    }

    /**
     * Starts {@code inner} in the sandbox's namespaces as the sandbox user.
     *
     * @param stdinPipe false: stdin is /dev/null
     */
    Process nsenter(List<String> inner, boolean stdinPipe) {
        requireAlive();
        List<String> argv = new ArrayList<>(List.of(runtime.tools().nsenter.toString(), "-t", Long.toString(init.pid()),
                "--user", "--mount", "--pid", "--uts", "--ipc", "--net",
                "-S", Integer.toString(LocalRuntime.SANDBOX_UID), "-G", Integer.toString(LocalRuntime.SANDBOX_UID)));
        argv.addAll(inner);
        ProcessBuilder pb = new ProcessBuilder(argv).directory(new File("/"));
        pb.environment().clear();
        if (!stdinPipe) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        try {
            return pb.start();
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("cannot enter sandbox " + id + ": " + e.getMessage()).asRuntimeException();
        }
    }

    /** Sends a signal to a host process group (a command's group; see {@link NsProcess}). */
    void killGroup(long hostPgid, int signal) {
        try {
            Process k = new ProcessBuilder(runtime.tools().kill.toString(), "-" + signal, "--", "-" + hostPgid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            k.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            log.warn("cannot signal process group {} of sandbox {}: {}", hostPgid, id, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void requireAlive() {
        if (!isAlive()) {
            throw unavailable();
        }
    }

    StatusRuntimeException unavailable() {
        return Status.UNAVAILABLE.withDescription("sandbox " + id + " is not running").asRuntimeException();
    }

    @Override
    public void kill() {
        synchronized (this) {
            if (killed) {
                return;
            }
            killed = true;
        }
        // the init (pid 1 of the pid namespace) takes every process of the sandbox with it
        ProcessHandle pid1 = init.parent().orElse(null);
        bwrap.destroyForcibly();
        if (pid1 != null) {
            pid1.destroyForcibly();
        }
        init.destroyForcibly();
        try {
            bwrap.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // pid 1 of the namespace ends only after every process in it was killed
        if (pid1 != null && !Reaped.await(pid1.pid(), 5_000)) {
            log.warn("sandbox {}: init {} did not exit", id, pid1.pid());
        }
        Reaped.await(init.pid(), 1_000);
        try {
            LayerDirs.deleteTree(layer.root);
        } catch (IOException e) {
            log.warn("cannot delete files of sandbox {} at {}: {}", id, layer.root, e.toString());
        }
        runtime.forget(this);
    }

    private static void checkArgs(List<String> argv) {
        long total = 0;
        for (String s : argv) {
            if (s.indexOf('\0') >= 0) {
                throw Status.INVALID_ARGUMENT.withDescription("arguments and environment values must not contain NUL")
                        .asRuntimeException();
            }
            total += s.getBytes(StandardCharsets.UTF_8).length + 1;
        }
        if (total > MAX_ARG_BYTES) {
            throw Status.INVALID_ARGUMENT.withDescription("command, arguments and environment exceed "
                    + MAX_ARG_BYTES + " bytes").asRuntimeException();
        }
    }

    @Override
    public String toString() {
        return "LocalSandbox[" + id + "]";
    }
}
