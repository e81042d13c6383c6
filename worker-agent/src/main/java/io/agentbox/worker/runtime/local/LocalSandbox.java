package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.worker.runtime.StartCommand;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.BuiltImageLabels;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.unpack.UpperCapture;
import io.agentbox.worker.image.unpack.WhiteoutForm;
import io.agentbox.worker.runtime.EnvVars;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.ResourceUsage;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxFiles;
import io.agentbox.worker.runtime.net.SandboxNetwork;
import io.agentbox.worker.runtime.shell.SandboxShell;
import io.agentbox.worker.runtime.shell.ShellFiles;
import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.agentbox.worker.runtime.shell.ShellProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One crun container of the {@link LocalRuntime}. Commands and file operations are forked by the
 * container's PID 1, the {@link SpawnerBinary spawner}, over a unix socket (or, in sandboxes
 * without it, run through {@code crun exec}): either way with the container's capabilities — none
 * for {@code user} —, seccomp filter, no_new_privs and cgroup. File operations use the static
 * busybox bound at {@value #BUSYBOX}, so images without a shell work too.
 */
final class LocalSandbox implements RuntimeSandbox {
    static final String HOME = EtcUsers.HOME;
    static final String BUSYBOX = "/.agentbox/bin/busybox";
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final Logger log = LoggerFactory.getLogger(LocalSandbox.class);

    /**
     * What the sandbox was started from, kept for snapshots (its layers) and resets (a new start
     * on the same lowers).
     *
     * @param template the template's name (a snapshot's id for a sandbox of a snapshot)
     * @param image the image's layers and config; empty: the host's root
     * @param spec its OCI config
     * @param lowerdir the overlay's lowerdir option
     * @param diskOptions the tmpfs options of its writable layer
     * @param diskBytes size limit of the writable layer (Long.MAX_VALUE: none)
     */
    record Launch(String template, Optional<SandboxImage> image, OciConfig.Spec spec, String lowerdir, String diskOptions, long diskBytes) {}

    private final String id;
    private final LocalRuntime runtime;
    /**
     * The container's init: gone or a zombie once the sandbox ended; a reset replaces it, and ends
     * every process of the container with one SIGKILL to it.
     */
    private final ContainerInit init;
    /** Which pair of root and disk mounts (and crun container) it runs on; a reset alternates them. */
    private volatile int layerSet;
    /** The container started on the other pair for the next reset to switch to, or null (none yet). */
    private volatile Standby standby;
    private final Launch launch;
    /** Serialises snapshots and resets of this sandbox (each needs the writable layer to stay put). */
    private final ReentrantLock transition = new ReentrantLock();
    private final ImageConfig config;
    private final SandboxNetwork.Attachment attachment;
    private final ShellFiles userFiles;
    private final ShellFiles rootFiles;
    private volatile boolean killed;
    /** Set before a freeze starts and cleared after a thaw: kill must thaw first (frozen tasks ignore SIGKILL). */
    private volatile boolean frozen;
    /** Commands the spawner runs whose exit has not come yet (see killProcesses). */
    private final Set<SpawnedProcess> spawned = ConcurrentHashMap.newKeySet();
    /**
     * The spawner's socket went away while the sandbox runs (root inside may delete it, e.g. with
     * {@code rm -rf /.agentbox}): commands start with {@code crun exec} from then on.
     */
    private volatile boolean spawnerLost;

    LocalSandbox(String id, LocalRuntime runtime, ProcessHandle init, ImageConfig config, SandboxNetwork.Attachment attachment,
                 Launch launch) {
        this.id = id;
        this.runtime = runtime;
        this.init = new ContainerInit(init);
        this.launch = launch;
        this.config = config;
        this.attachment = attachment;
        this.userFiles = new ShellFiles(new Shell(LaunchSpec.USER), ShellFiles.Tools.BUSYBOX);
        this.rootFiles = new ShellFiles(new Shell(LaunchSpec.ROOT), ShellFiles.Tools.BUSYBOX);
    }

    @Override
    public String id() {
        return id;
    }

    /** Host pid of the container's init. */
    long initPid() {
        return init.pid();
    }

    SandboxNetwork.Attachment attachment() {
        return attachment;
    }

    int layerSet() {
        return layerSet;
    }

    /** The crun container (and cgroup) the sandbox runs as now. */
    String containerId() {
        return LocalRuntime.containerOf(id, layerSet);
    }

    /**
     * Drops a standby not started yet, or waits for one being started to come up or fail (before
     * the sandbox's containers are deleted).
     */
    void settleStandby() {
        Standby next = standby;
        if (next != null) {
            next.settle(LocalRuntime.START_TIMEOUT_MS);
        }
    }

    /**
     * Starts a standby container in the background ahead of the first reset (a claim of a
     * template whose sandboxes get reset); nothing when the sandbox has one or a reset runs.
     */
    void prepareStandby() {
        if (!transition.tryLock()) {
            return; // a reset or snapshot runs: a reset prepares the next standby itself
        }
        try {
            if (standby == null && isAlive()) {
                standby = runtime.standby(this, launch, initPid(), 1 - layerSet);
            }
        } finally {
            transition.unlock();
        }
    }

    Launch launch() {
        return launch;
    }

    @Override
    public boolean isAlive() {
        return !killed && init.running(Reaped::ended);
    }

    @Override
    public Optional<SandboxImage> image() {
        return launch.image();
    }

    /**
     * Copies the writable layer into {@code dest} with {@link UpperCapture}: a first pass while
     * the sandbox runs, a second one with every process frozen (a sandbox that is already frozen,
     * e.g. paused, stays so). Processes are not part of it.
     */
    @Override
    public UpperCapture.Result captureWritableLayer(Path dest, WhiteoutForm form) {
        transition.lock();
        try {
            requireAlive();
            return new UpperCapture(form, launch.diskBytes()).capture(runtime.upperOf(this), dest, work -> {
                synchronized (this) { // freeze and thaw take this monitor: a pause waits until the thaw
                    requireAlive();
                    boolean wasFrozen = frozen;
                    if (!wasFrozen) {
                        freeze();
                    }
                    try {
                        work.run();
                    } finally {
                        if (!wasFrozen && !killed) {
                            thaw();
                        }
                    }
                }
            });
        } catch (IOException e) {
            throw isAlive() ? Status.INTERNAL.withDescription("snapshot of sandbox " + id + " failed: " + e.getMessage())
                    .asRuntimeException() : unavailable();
        } finally {
            transition.unlock();
        }
    }

    /**
     * Restarts the container on a fresh writable layer over the same lowers, inside its own user
     * and network namespaces, so every process ends and the file system is the template's (or
     * snapshot's) again, while the id, the address and the network interface stay. A reset that
     * fails kills the sandbox.
     */
    @Override
    public void reset() {
        transition.lock();
        try {
            synchronized (this) {
                requireAlive();
                init.replacing();
            }
            try {
                long t0 = System.nanoTime();
                int from = layerSet;
                runtime.resetting(launch.template());
                ProcessHandle ready = null;
                Standby next = standby;
                standby = null;
                if (next != null && next.dropIfQueued()) {
                    next = null; // queued behind other sandboxes' standbys: starting the container here is no slower
                }
                if (next != null) {
                    try {
                        ready = next.await(LocalRuntime.START_TIMEOUT_MS);
                    } catch (IllegalStateException e) {
                        log.info("sandbox {}: no standby for this reset ({}); starting the container again", id, e.getMessage());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw Status.CANCELLED.withDescription("reset of sandbox " + id + " interrupted").asRuntimeException();
                    }
                }
                long t1 = System.nanoTime();
                ProcessHandle now;
                if (ready != null) {
                    endProcesses(from);
                    // its init ends only once every process of its pid namespace has (the kernel
                    // waits for them), so no old process holds a port or a file after this
                    if (!Reaped.await(initPid(), LocalRuntime.START_TIMEOUT_MS)) {
                        throw Status.UNAVAILABLE.withDescription("reset of sandbox " + id
                                + ": its processes did not end").asRuntimeException();
                    }
                    now = ready;
                } else {
                    now = runtime.restart(this, launch, initPid(), from);
                }
                synchronized (this) {
                    init.replace(now);
                    layerSet = 1 - from;
                    frozen = false; // a new cgroup: nothing is frozen
                    spawnerLost = false; // a new container: its own spawner
                }
                long t2 = System.nanoTime();
                standby = runtime.standby(this, launch, now.pid(), from);
                if (log.isDebugEnabled()) {
                    log.debug("sandbox {} reset in {} us: {} {} us, switch {} us", id, (t2 - t0) / 1000,
                            ready != null ? "standby wait" : "no standby, restart", (t1 - t0) / 1000, (t2 - t1) / 1000);
                }
            } catch (RuntimeException e) {
                log.warn("reset of sandbox {} failed, killing it: {}", id, e.getMessage());
                kill();
                throw e instanceof StatusRuntimeException s ? s
                        : Status.UNAVAILABLE.withDescription("reset of sandbox " + id + " failed: " + e).asRuntimeException();
            } finally {
                init.settled();
            }
        } finally {
            transition.unlock();
        }
        // a built template's start command runs again, as at every start (the pool does it there)
        try {
            StartCommand.apply(this, launch.image());
        } catch (RuntimeException e) {
            log.warn("sandbox {}: its start command failed after a reset, killing it: {}", id, e.getMessage());
            kill();
            throw e instanceof StatusRuntimeException s ? s
                    : Status.UNAVAILABLE.withDescription("reset of sandbox " + id + ": start command failed: " + e).asRuntimeException();
        }
    }

    /**
     * SIGKILL to every process of the container on pair {@code set}: one signal to its init, whose
     * end makes the kernel kill the rest of its pid namespace (no crun process on a reset's path);
     * crun's kill --all when the init cannot be signalled.
     */
    private void endProcesses(int set) {
        ProcessHandle h = init.handle();
        if (!h.destroyForcibly() && !Reaped.ended(h.pid())) {
            runtime.retire(this, set);
        }
    }

    @Override
    public SandboxFiles files() {
        return userFiles;
    }

    @Override
    public SandboxFiles files(String user) {
        return LaunchSpec.ROOT.equals(LaunchSpec.requireUser(user == null || user.isEmpty() ? defaultUser() : user))
                ? rootFiles : userFiles;
    }

    /** A built template's final USER when it is one sandboxes have ({@code user}, {@code root}); else {@code user}. */
    @Override
    public String defaultUser() {
        return BuiltImageLabels.isBuilt(config) && LaunchSpec.ROOT.equals(config.user()) ? LaunchSpec.ROOT : LaunchSpec.USER;
    }

    /** A built template's final WORKDIR; other images keep E2B's default, the user's home. */
    @Override
    public String defaultWorkdir() {
        return BuiltImageLabels.isBuilt(config) ? config.workingDir() : "";
    }

    /** The environment a command starts from: identity, then the image's Env, then the caller's (which wins). */
    Map<String, String> environment(LaunchSpec spec) {
        Map<String, String> env = new LinkedHashMap<>();
        boolean root = spec.asRoot();
        env.put("HOME", root ? "/root" : HOME);
        env.put("USER", spec.user());
        env.put("LOGNAME", spec.user());
        env.put("PATH", DEFAULT_PATH);
        for (String kv : config.env()) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                env.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        env.putAll(spec.env());
        return env;
    }

    @Override
    public LaunchedProcess launch(LaunchSpec spec) {
        List<String> command = new ArrayList<>();
        command.add(spec.cmd());
        command.addAll(spec.args());
        String cwd = spec.cwd() == null || spec.cwd().isEmpty()
                ? (config.workingDir().isEmpty() ? (spec.asRoot() ? "/root" : HOME) : config.workingDir())
                : spec.cwd();
        if (spec.pty() != null) {
            command = Terminal.wrap(command, spec.pty());
        }
        if (viaSpawner()) {
            Map<String, String> env = environment(spec);
            EnvVars.requireValid(env);
            List<String> envList = new ArrayList<>(env.size());
            env.forEach((k, v) -> envList.add(k + "=" + v));
            List<String> words = new ArrayList<>(command);
            words.addAll(envList);
            words.add(cwd);
            ShellLaunch.requireArgs(words);
            int flags = SpawnedProcess.FLAG_SETSID | SpawnedProcess.FLAG_LOOKUP | (spec.stdin() ? SpawnedProcess.FLAG_STDIN : 0);
            SpawnedProcess p = spawn(new SpawnedProcess.Request(command, envList, cwd, uidOf(spec.user()), uidOf(spec.user()), flags));
            if (p != null) {
                int pid = p.sandboxPid();
                String user = spec.user();
                return new ShellProcess(p, pid, spec.stdin(), p::signal,
                        spec.pty() != null ? size -> Terminal.resize(this, pid, size, user) : null);
            }
        }
        List<String> argv = ShellLaunch.busyboxArgv(BUSYBOX, cwd, environment(spec), command);
        Process p = exec(argv, spec.stdin(), spec.user());
        return NsProcess.await(this, new Shell(spec.user()), p, cwd, spec.stdin(), spec.pty() != null, spec.user());
    }

    private static int uidOf(String user) {
        return LaunchSpec.ROOT.equals(user) ? 0 : LocalRuntime.SANDBOX_UID;
    }

    private boolean viaSpawner() {
        return runtime.hasSpawner() && !spawnerLost;
    }

    /**
     * Starts a command through the sandbox's spawner and returns once it runs.
     *
     * @return the command; null when the spawner's socket is gone (the caller uses crun exec)
     * @throws StatusRuntimeException INVALID_ARGUMENT when the cwd cannot be entered; NOT_FOUND +
     *     SANDBOX_NOT_FOUND when the sandbox is gone; UNAVAILABLE when the command could not start
     */
    private SpawnedProcess spawn(SpawnedProcess.Request request) {
        requireAlive();
        Path socket = Path.of("/proc/" + initPid() + "/root" + OciConfig.SPAWNER_SOCKET);
        try {
            SpawnedProcess p = SpawnedProcess.start(socket, request, ShellLaunch.START_TIMEOUT_MS);
            spawned.add(p);
            p.onExit(() -> spawned.remove(p));
            return p;
        } catch (SpawnedProcess.Failed e) {
            if (!isAlive()) {
                throw unavailable();
            }
            if (e.reason == SpawnedProcess.FAIL_CWD) {
                throw Status.INVALID_ARGUMENT.withDescription("cwd '" + request.cwd() + "' does not exist").asRuntimeException();
            }
            throw Status.UNAVAILABLE.withDescription("cannot start process in sandbox " + id + ": " + e.getMessage())
                    .asRuntimeException();
        } catch (IOException e) {
            if (!isAlive()) {
                throw unavailable();
            }
            if (e instanceof SpawnedProcess.Unreachable) {
                spawnerLost = true;
                log.warn("sandbox {}: {}; its commands start with crun exec from now on", id, e.getMessage());
                return null;
            }
            // the connection broke while starting (not a missing socket, that is Unreachable above)
            throw Status.UNAVAILABLE.withDescription("cannot start a command in sandbox " + id + ": " + e.getMessage())
                    .asRuntimeException();
        }
    }

    /**
     * Starts {@code inner} in the container as {@code user} the way {@code crun exec} does (cwd /,
     * PATH only, no new session), through the spawner when the sandbox has one; a leading
     * {@code /bin/sh} becomes the bound busybox shell.
     */
    Process exec(List<String> inner, boolean stdinPipe, String user) {
        requireAlive();
        List<String> cmd = new ArrayList<>(inner);
        if (!cmd.isEmpty() && cmd.get(0).equals("/bin/sh")) {
            cmd.set(0, "sh");
            cmd.add(0, BUSYBOX);
        }
        if (viaSpawner()) {
            ShellLaunch.requireArgs(cmd);
            boolean root = LaunchSpec.ROOT.equals(user);
            List<String> env = List.of("PATH=" + DEFAULT_PATH, "HOME=" + (root ? "/root" : HOME));
            SpawnedProcess p = spawn(new SpawnedProcess.Request(cmd, env, "/", uidOf(user), uidOf(user),
                    SpawnedProcess.FLAG_LOOKUP | (stdinPipe ? SpawnedProcess.FLAG_STDIN : 0)));
            if (p != null) {
                return p;
            }
        }
        return crunExec(cmd, stdinPipe, user);
    }

    /** Starts {@code cmd} with {@code crun exec} (sandboxes without a spawner). */
    private Process crunExec(List<String> cmd, boolean stdinPipe, String user) {
        String ids = LaunchSpec.ROOT.equals(user) ? "0:0" : SANDBOX_IDS;
        List<String> argv = new ArrayList<>(List.of(runtime.tools().crun.toString(), "--root", runtime.crunRoot().toString(),
                "exec", "--no-new-privs", "--user", ids, "--env", "PATH=" + DEFAULT_PATH, containerId()));
        argv.addAll(cmd);
        ProcessBuilder pb = new ProcessBuilder(runtime.holder().enter(argv)).directory(new File("/"));
        // nsenter and crun run as the worker: nothing the user chose may reach their environment
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        if (!stdinPipe) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        try {
            return pb.start();
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("cannot enter sandbox " + id + ": " + e.getMessage()).asRuntimeException();
        }
    }

    private static final String SANDBOX_IDS = LocalRuntime.SANDBOX_UID + ":" + LocalRuntime.SANDBOX_UID;

    /**
     * Sends a signal to a host process group (a command's group; see NsProcess). Right after the
     * pid line the command may not have called setsid yet: then the signal goes to it alone.
     */
    void killGroup(long hostPgid, int signal) {
        if (kill(signal, "-" + hostPgid) != 0) {
            kill(signal, Long.toString(hostPgid));
        }
    }

    /** procps kill (it takes "--" before a negative pid); returns its exit code. */
    private int kill(int signal, String target) {
        try {
            Process k = new ProcessBuilder("kill", "-" + signal, "--", target)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return k.waitFor(5, TimeUnit.SECONDS) ? k.exitValue() : -1;
        } catch (IOException e) {
            log.warn("cannot signal {} of sandbox {}: {}", target, id, e.toString());
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    void requireAlive() {
        if (!isAlive()) {
            throw unavailable();
        }
    }

    /**
     * The error of an operation on a sandbox that ended meanwhile (killed, or its init gone): the
     * sandbox is gone for good, so it is reported as gone (NOT_FOUND + SANDBOX_NOT_FOUND, a 404 or
     * E2B's 502 at the hub) rather than as a transient UNAVAILABLE (a 503 that invites a retry).
     */
    StatusRuntimeException unavailable() {
        return ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND, "sandbox " + id + " is not running");
    }

    @Override
    public synchronized void freeze() {
        requireAlive();
        frozen = true;
        runtime.cgroups().freeze(containerId(), true);
    }

    @Override
    public synchronized void thaw() {
        requireAlive();
        runtime.cgroups().freeze(containerId(), false);
        frozen = false;
    }

    /** How long the processes a {@link #killProcesses()} killed may take to be gone. */
    static final long KILL_WAIT_MS = 5_000;

    /**
     * Freezes the cgroup (so nothing forks meanwhile), sends SIGKILL to every process in it but
     * the init, thaws it (a frozen task dies only once thawed on v1) and waits until the init is
     * alone. Leaves the sandbox thawed.
     */
    @Override
    public synchronized void killProcesses() {
        requireAlive();
        Cgroups cg = runtime.cgroups();
        String container = containerId();
        long initPid = initPid();
        frozen = true;
        cg.freeze(container, true);
        for (long pid : cg.procs(container)) {
            if (pid != initPid) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        cg.freeze(container, false);
        frozen = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(KILL_WAIT_MS);
        while (true) {
            List<Long> left = new ArrayList<>(cg.procs(container));
            left.remove(initPid);
            if (left.isEmpty()) {
                awaitSpawnedExits(deadline);
                return;
            }
            if (System.nanoTime() > deadline) {
                throw Status.UNAVAILABLE.withDescription("sandbox " + id + ": processes " + left + " outlived SIGKILL for "
                        + KILL_WAIT_MS + " ms").asRuntimeException();
            }
            // a process forked between the read and the freeze: kill it too
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted while dropping the processes of " + id).asRuntimeException();
            }
        }
    }

    /**
     * Waits (until {@code deadline}, System.nanoTime) for the spawner to report the exits of the
     * commands just killed: a freeze right after (a pause) would stop it before it could, and
     * their clients would see no exit until the resume.
     */
    private void awaitSpawnedExits(long deadline) {
        while (!spawned.isEmpty() && System.nanoTime() < deadline) {
            spawned.removeIf(p -> !p.isAlive());
            LockSupport.parkNanos(500_000);
        }
    }

    /** CPU and memory from the cgroup, disk from statfs of the tmpfs writable layer; null once ended. */
    @Override
    public ResourceUsage usage() {
        if (!isAlive()) {
            return null;
        }
        // the current container's cgroup: a reset moves the sandbox to a new one (CPU time restarts)
        CgroupUsage.Reading r = CgroupUsage.read(runtime.cgroups(), containerId());
        Statvfs.Space disk = Statvfs.of(runtime.diskView(this));
        if (r == null || disk == null) {
            return null;
        }
        return new ResourceUsage(r.cpuNanos(), r.memUsed(), r.memCache(), r.memLimit(), disk.used(), disk.total());
    }

    /** The {@code oom_kill} count of the current container's memory cgroup; -1 once it is gone. */
    @Override
    public long oomKills() {
        return CgroupUsage.oomKills(runtime.cgroups(), containerId());
    }

    @Override
    public void kill() {
        synchronized (this) {
            if (killed) {
                return;
            }
            killed = true;
            if (frozen) {
                try {
                    runtime.cgroups().freeze(containerId(), false);
                } catch (StatusRuntimeException e) {
                    log.debug("thaw before kill of {}: {}", id, e.getStatus());
                }
                frozen = false;
            }
        }
        runtime.destroy(this);
    }

    /** The shell file operations and pty resizes run through, as one user. */
    final class Shell implements SandboxShell {
        private final String user;

        Shell(String user) {
            this.user = user;
        }

        @Override
        public Process start(List<String> argv, boolean stdinPipe) {
            return exec(argv, stdinPipe, user);
        }

        @Override
        public boolean isAlive() {
            return LocalSandbox.this.isAlive();
        }

        @Override
        public StatusRuntimeException unavailable() {
            return LocalSandbox.this.unavailable();
        }
    }

    @Override
    public String toString() {
        return "LocalSandbox[" + id + "]";
    }
}
