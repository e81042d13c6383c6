package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxFiles;
import io.agentbox.worker.runtime.shell.SandboxShell;
import io.agentbox.worker.runtime.shell.ShellFiles;
import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One bubblewrap sandbox of the {@link LocalRuntime}. */
final class LocalSandbox implements RuntimeSandbox, SandboxShell {
    static final String HOME = "/home/user";
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /**
     * What a command's environment starts from. nsenter passes its environment on, so it gets
     * exactly this (fixed values only: nsenter runs as the worker, and user-chosen variables such
     * as LD_PRELOAD must only ever reach programs inside the sandbox).
     */
    static final Map<String, String> BASE_ENV = Map.of("HOME", HOME, "USER", "user", "LOGNAME", "user",
            "PATH", DEFAULT_PATH);

    private static final Logger log = LoggerFactory.getLogger(LocalSandbox.class);

    private final String id;
    private final LocalRuntime runtime;
    private final LayerDirs layer;
    private final Process bwrap;
    /** bwrap's init, pid 1 of the sandbox: when it dies the kernel kills every process in the sandbox. */
    private final ProcessHandle pid1;
    /** The sandbox's main process ({@code cat} on the worker's pipe): its namespaces are the ones we enter. */
    private final ProcessHandle init;
    private final ShellFiles files;
    private volatile boolean killed;

    LocalSandbox(String id, LocalRuntime runtime, LayerDirs layer, Process bwrap, ProcessHandle pid1, ProcessHandle init) {
        this.id = id;
        this.runtime = runtime;
        this.layer = layer;
        this.bwrap = bwrap;
        this.pid1 = pid1;
        this.init = init;
        this.files = new ShellFiles(this);
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
        List<String> command = new ArrayList<>();
        command.add(spec.cmd());
        command.addAll(spec.args());
        // chain: nsenter -> sh (cd, export, echo $$) -> setsid -> command, all exec'd in one pid
        List<String> argv = ShellLaunch.exportingArgv(runtime.tools().setsid.toString(), spec,
                spec.pty() == null ? command : Terminal.wrap(command, spec.pty()));
        Process p = nsenter(argv, spec.stdin(), BASE_ENV);
        return NsProcess.await(this, p, spec.cwd(), spec.stdin(), spec.pty() != null);
    }

    /**
     * Starts {@code inner} in the sandbox's namespaces as the sandbox user.
     *
     * @param stdinPipe false: stdin is /dev/null
     */
    @Override
    public Process start(List<String> inner, boolean stdinPipe) {
        return nsenter(inner, stdinPipe, Map.of());
    }

    /** @param env the whole environment of nsenter and so of {@code inner}: fixed values only, never the user's */
    Process nsenter(List<String> inner, boolean stdinPipe, Map<String, String> env) {
        requireAlive();
        List<String> argv = new ArrayList<>(List.of(runtime.tools().nsenter.toString(), "-t", Long.toString(init.pid()),
                "--user", "--mount", "--pid", "--uts", "--ipc", "--net",
                "-S", Integer.toString(LocalRuntime.SANDBOX_UID), "-G", Integer.toString(LocalRuntime.SANDBOX_UID)));
        argv.addAll(inner);
        ProcessBuilder pb = new ProcessBuilder(argv).directory(new File("/"));
        pb.environment().clear();
        pb.environment().putAll(env);
        if (!stdinPipe) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        try {
            return pb.start();
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("cannot enter sandbox " + id + ": " + e.getMessage()).asRuntimeException();
        }
    }

    /** Sends a signal to a host process group (a command's group; see NsProcess). */
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

    @Override
    public StatusRuntimeException unavailable() {
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
        // SIGKILL to pid 1 ends the pid namespace: the kernel kills every process in it and lets
        // pid 1 exit only after all of them are gone; bwrap, its parent and our child, then reaps
        // it and exits, so waiting for bwrap (woken by the JDK's reaper, no polling) is enough
        pid1.destroyForcibly();
        boolean ended = false;
        try {
            ended = bwrap.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!ended) {
            log.warn("sandbox {}: bubblewrap {} did not exit after its init was killed; killing it", id, bwrap.pid());
            bwrap.destroyForcibly();
            init.destroyForcibly();
            if (!Reaped.await(pid1.pid(), 5_000)) {
                log.warn("sandbox {}: init {} did not exit", id, pid1.pid());
            }
        }
        try {
            LayerDirs.deleteTree(layer.root);
        } catch (IOException e) {
            log.warn("cannot delete files of sandbox {} at {}: {}", id, layer.root, e.toString());
        }
        runtime.forget(this);
    }

    @Override
    public String toString() {
        return "LocalSandbox[" + id + "]";
    }
}
