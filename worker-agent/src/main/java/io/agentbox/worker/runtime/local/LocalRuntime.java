package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code local} runtime: every sandbox is a bubblewrap container (own user, mount, pid, uts,
 * ipc and — for every network but "host" — net namespace holding only loopback; "isolated" gets
 * its outbound link from a {@code SandboxNetwork} where one is wired) whose init runs {@code cat} on a pipe only
 * the worker writes to (nothing is ever written): when the worker's JVM ends, however it ends, the
 * pipe reaches end-of-file, {@code cat} exits and the sandbox's pid namespace ends with it;
 * commands and file operations enter its namespaces with {@code nsenter} as uid 1000 ("user").
 *
 * <p>Isolation: the host root is mounted read-only, /home is an empty tmpfs except
 * /home/user = {@code <layer>/home}, /tmp = {@code <layer>/tmp}, and the data directory is hidden
 * under an empty tmpfs, so sandboxes see neither each other's files nor processes. When the
 * worker runs as root, bubblewrap is started as an unprivileged host uid (65534 by default) so the
 * sandbox user cannot read root-only host files such as /etc/shadow; this needs every directory
 * above {@code <dataDir>/sandboxes} to be searchable by that uid (o+x), otherwise the runtime
 * falls back to the worker's uid and masks /root and /etc/shadow (logged as a warning).
 *
 * <p>Lifecycle: bubblewrap runs with --die-with-parent, and its init's {@code cat} ends at the
 * end-of-file of the worker's pipe, which comes when the JVM ends or when the JDK reaps a
 * bubblewrap that died (--die-with-parent alone left an init and its child running with parent 1
 * when bubblewrap was killed as it started); at construction leftovers of a previous run under
 * {@code <dataDir>/sandboxes} are killed and deleted.
 */
public final class LocalRuntime implements SandboxRuntime {
    /** uid/gid of "user" inside every sandbox. */
    public static final int SANDBOX_UID = 1000;
    /** Host uid that root workers run sandboxes as; mapped to {@link #SANDBOX_UID} inside. */
    public static final int DEFAULT_HOST_UID = 65534;
    public static final Duration START_TIMEOUT = Duration.ofSeconds(15);

    private static final Logger log = LoggerFactory.getLogger(LocalRuntime.class);

    private final HostTools tools;
    private final Path sandboxesDir;
    /** passwd and group, shared read-only by every sandbox. */
    private final Path etcDir;
    /** Host paths covered with an empty tmpfs inside every sandbox (the worker's and the hub's data). */
    private final List<Path> hiddenPaths;
    /** -1: bubblewrap runs as the worker's own uid. */
    private final int hostUid;
    private final Set<LocalSandbox> live = ConcurrentHashMap.newKeySet();
    /**
     * bubblewrap's --die-with-parent fires when the thread that forked it ends, so every sandbox
     * is forked from these never-ending threads. Two threads: starts are CPU-light but not free.
     */
    private final ExecutorService spawner = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "sandbox-spawner");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;

    /**
     * @param dataDir worker data directory; sandboxes live under {@code dataDir/sandboxes/<id>}
     * @throws IllegalStateException when bubblewrap or another needed host program is missing
     */
    public LocalRuntime(Path dataDir) {
        this(dataDir, List.of());
    }

    /**
     * @param alsoHidden more host directories to cover with an empty tmpfs inside sandboxes (for
     *     example the hub's store in standalone mode); paths under /tmp, /home, /proc or /dev are
     *     replaced in the sandbox anyway and are skipped
     */
    public LocalRuntime(Path dataDir, List<Path> alsoHidden) {
        this.tools = HostTools.detect();
        try {
            Files.createDirectories(dataDir);
            Path real = dataDir.toRealPath();
            this.sandboxesDir = real.resolve("sandboxes");
            this.etcDir = real.resolve("sandbox-etc");
            Files.createDirectories(sandboxesDir);
            LayerDirs.writeEtc(etcDir);
            killLeftovers(sandboxesDir);
            for (Path p : list(sandboxesDir)) {
                LayerDirs.deleteTree(p);
            }
            if (tools.workerUid == 0) {
                Files.setAttribute(sandboxesDir, "unix:mode", 0711);
            }
            List<Path> hidden = new ArrayList<>();
            for (Path p : concat(real, alsoHidden)) {
                Path abs = p.toAbsolutePath().normalize();
                if (hideable(abs) && Files.isDirectory(abs) && hidden.stream().noneMatch(abs::startsWith)) {
                    hidden.removeIf(h -> h.startsWith(abs));
                    hidden.add(abs);
                }
            }
            this.hostUid = chooseHostUid();
            // bwrap, running as the unprivileged host uid, could not even create the mount point
            // below a parent it may not enter; and what it may not enter the sandbox cannot see
            hidden.removeIf(h -> hostUid >= 0 && !traversableByOthers(h));
            this.hiddenPaths = List.copyOf(hidden);
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare sandbox directory under " + dataDir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return "local";
    }

    /** Directory holding one layer directory per live sandbox. */
    public Path sandboxesDir() {
        return sandboxesDir;
    }

    HostTools tools() {
        return tools;
    }

    /** The worker fills this runtime's pools itself: its warm pool over {@link #start(String, Template, Optional)}. */
    @Override
    public RuntimePool openPool(Template template, PoolContext context) {
        return context.warmPool(template, this::start);
    }

    /**
     * Starts one idle sandbox of {@code template} from {@code image} ({@code Optional.empty()}:
     * the host root); this runtime does not run images yet and refuses one rather than silently
     * running the host root in its place.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the sandbox cannot be started
     */
    public RuntimeSandbox start(String sandboxId, Template template, Optional<SandboxImage> image) {
        if (image.isPresent()) {
            throw Status.UNAVAILABLE.withDescription("runtime '" + name() + "' cannot start sandboxes from image "
                    + image.get().reference()).asRuntimeException();
        }
        return start(sandboxId, template);
    }

    /** Starts one idle sandbox of {@code template} on the host root and returns once commands can run in it. */
    public RuntimeSandbox start(String sandboxId, Template template) {
        if (closed) {
            throw Status.UNAVAILABLE.withDescription("local runtime is shut down").asRuntimeException();
        }
        // only an explicit "host" shares the host's network; "isolated" (also the default when
        // empty), "none" and anything unknown get a namespace of their own
        boolean isolated = !"host".equals(template.getNetwork());
        LayerDirs layer = new LayerDirs(sandboxesDir.resolve(sandboxId));
        try {
            layer.create(hostUid);
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("cannot create sandbox layer " + layer.root + ": " + e.getMessage())
                    .withCause(e).asRuntimeException();
        }
        List<String> argv = bwrapArgv(sandboxId, layer, isolated);
        Future<Process> forked = spawner.submit(() -> {
            // stdin stays a pipe from this JVM: its end-of-file ends the sandbox (see the class comment)
            ProcessBuilder pb = new ProcessBuilder(argv)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.appendTo(layer.log.toFile()));
            // bwrap's init and `cat` keep the environment they were started with, readable in
            // the sandbox as /proc/1/environ: never hand them the worker's (secrets live there)
            pb.environment().clear();
            pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
            // not killed here even after close(): a bwrap killed as it sets up can leave its child
            // blocked with parent 1 (seen in CI); the caller's start() kills it through its init
            return pb.start();
        });
        Process bwrap;
        try {
            bwrap = forked.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cleanupFailed(layer, null);
            throw Status.CANCELLED.withDescription("interrupted while starting sandbox").asRuntimeException();
        } catch (ExecutionException | TimeoutException e) {
            cleanupFailed(layer, null);
            throw Status.UNAVAILABLE.withDescription("cannot start bubblewrap: " + e.getMessage()).asRuntimeException();
        }
        ProcessHandle[] pid1AndInit = awaitInit(bwrap, layer);
        LocalSandbox sandbox = new LocalSandbox(sandboxId, this, layer, bwrap, pid1AndInit[0], pid1AndInit[1]);
        live.add(sandbox);
        if (closed) {
            sandbox.kill();
            throw Status.UNAVAILABLE.withDescription("local runtime is shut down").asRuntimeException();
        }
        return sandbox;
    }

    void forget(LocalSandbox sandbox) {
        live.remove(sandbox);
    }

    private static void destroyTree(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    @Override
    public void close() {
        closed = true;
        for (LocalSandbox s : new ArrayList<>(live)) {
            s.kill();
        }
        spawner.shutdownNow();
        try {
            LayerDirs.deleteTree(etcDir);
        } catch (IOException e) {
            log.warn("cannot delete {}: {}", etcDir, e.toString());
        }
    }

    private List<String> bwrapArgv(String sandboxId, LayerDirs layer, boolean isolated) {
        List<String> a = new ArrayList<>();
        if (hostUid >= 0) {
            a.addAll(List.of(tools.setpriv.toString(), "--reuid=" + hostUid, "--regid=" + hostUid, "--clear-groups"));
        }
        a.addAll(List.of(tools.bwrap.toString(), "--unshare-all"));
        if (!isolated) {
            a.add("--share-net");
        }
        a.addAll(List.of("--die-with-parent", "--unshare-user",
                "--uid", Integer.toString(SANDBOX_UID), "--gid", Integer.toString(SANDBOX_UID),
                "--hostname", sandboxId,
                "--ro-bind", "/", "/",
                "--tmpfs", "/home",
                "--bind", layer.home.toString(), "/home/user",
                "--bind", layer.tmp.toString(), "/tmp",
                "--proc", "/proc",
                "--dev", "/dev",
                "--ro-bind", etcDir.resolve("passwd").toString(), "/etc/passwd",
                "--ro-bind", etcDir.resolve("group").toString(), "/etc/group"));
        for (Path hidden : hiddenPaths) {
            a.addAll(List.of("--tmpfs", hidden.toString()));
        }
        if (hostUid < 0 && tools.workerUid == 0) {
            // the sandbox user maps to host root here: hide the most sensitive root-only data
            a.addAll(List.of("--tmpfs", "/root"));
            for (String f : List.of("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")) {
                if (Files.exists(Path.of(f))) {
                    a.addAll(List.of("--ro-bind", "/dev/null", f));
                }
            }
        }
        a.addAll(List.of("--chdir", "/home/user", "--cap-drop", "ALL", "cat"));
        return a;
    }

    /**
     * Waits until bwrap's init (pid 1 of the sandbox) forked and its child exec'd {@code cat}:
     * then the namespaces are ready. Follows bwrap -> init -> cat through
     * /proc/<pid>/task/<pid>/children, never by listing /proc.
     *
     * @return pid 1 and the {@code cat}
     */
    private ProcessHandle[] awaitInit(Process bwrap, LayerDirs layer) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        long pid1 = -1;
        while (System.nanoTime() < deadline) {
            if (!bwrap.isAlive()) {
                String err = readLog(layer);
                cleanupFailed(layer, bwrap);
                throw Status.UNAVAILABLE.withDescription("bubblewrap exited with " + bwrap.exitValue() + ": " + err)
                        .asRuntimeException();
            }
            if (pid1 < 0) {
                pid1 = ProcFs.firstChild(bwrap.pid());
            }
            long main = pid1 < 0 ? -1 : ProcFs.firstChild(pid1);
            // before its exec the child still runs bwrap's code
            if (main > 0 && "cat".equals(ProcFs.comm(main))) {
                Optional<ProcessHandle> p1 = ProcessHandle.of(pid1);
                Optional<ProcessHandle> s = ProcessHandle.of(main);
                if (p1.isPresent() && s.isPresent()) {
                    return new ProcessHandle[] {p1.get(), s.get()};
                }
            }
            // bwrap needs a few ms to set up; checking every 0.5 ms costs little CPU and little delay
            LockSupport.parkNanos(500_000);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                cleanupFailed(layer, bwrap);
                throw Status.CANCELLED.withDescription("interrupted while starting sandbox").asRuntimeException();
            }
        }
        cleanupFailed(layer, bwrap);
        throw Status.UNAVAILABLE.withDescription("sandbox did not start within " + START_TIMEOUT.toSeconds() + " s")
                .asRuntimeException();
    }

    private static String readLog(LayerDirs layer) {
        try {
            String s = Files.readString(layer.log).strip();
            return s.length() > 2000 ? s.substring(0, 2000) : s;
        } catch (IOException e) {
            return "(no output)";
        }
    }

    private void cleanupFailed(LayerDirs layer, Process bwrap) {
        if (bwrap != null) {
            destroyTree(bwrap);
            try {
                bwrap.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            LayerDirs.deleteTree(layer.root);
        } catch (IOException e) {
            log.warn("cannot delete layer {}: {}", layer.root, e.toString());
        }
    }

    private int chooseHostUid() {
        if (tools.workerUid != 0) {
            return -1;
        }
        java.util.Optional<Path> blocked = firstUnsearchable(sandboxesDir.getParent());
        if (blocked.isPresent()) {
            log.warn("{} is not searchable by other users (o+x), so sandboxes of this root worker run as host root "
                    + "(with /root and /etc/shadow masked) instead of uid {}; use a data directory under a "
                    + "searchable path for stronger isolation", blocked.get(), DEFAULT_HOST_UID);
            return -1;
        }
        return DEFAULT_HOST_UID;
    }

    /** True when every directory from / down to {@code dir} grants search (x) to others. */
    static boolean traversableByOthers(Path dir) {
        return firstUnsearchable(dir).isEmpty();
    }

    /** The first directory from / down to {@code dir} that others may not search (or whose mode is unreadable). */
    private static java.util.Optional<Path> firstUnsearchable(Path dir) {
        Path p = dir.toAbsolutePath().normalize();
        for (int i = 0; i <= p.getNameCount(); i++) {
            Path ancestor = i == 0 ? p.getRoot() : p.getRoot().resolve(p.subpath(0, i));
            try {
                if (!Files.getPosixFilePermissions(ancestor).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    return java.util.Optional.of(ancestor);
                }
            } catch (IOException | UnsupportedOperationException e) {
                return java.util.Optional.of(ancestor);
            }
        }
        return java.util.Optional.empty();
    }

    /** The data dir can be masked with a tmpfs unless it lies under a path the sandbox remounts anyway. */
    private static boolean hideable(Path dataDir) {
        for (String shadowed : List.of("/tmp", "/home", "/proc", "/dev")) {
            if (dataDir.startsWith(shadowed)) {
                return false;
            }
        }
        return !dataDir.equals(Path.of("/"));
    }

    private static List<Path> concat(Path first, List<Path> rest) {
        List<Path> all = new ArrayList<>();
        all.add(first);
        all.addAll(rest);
        return all;
    }

    private static List<Path> list(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.toList();
        }
    }

    /** Kills bubblewrap processes left by a previous worker whose layers live in {@code dir}. */
    private static void killLeftovers(Path dir) {
        String marker = dir + "/";
        List<ProcessHandle> victims = ProcessHandle.allProcesses()
                .filter(h -> h.info().command().map(c -> c.endsWith("/bwrap")).orElse(false))
                .filter(h -> h.info().arguments().map(args -> {
                    for (String arg : args) {
                        if (arg.startsWith(marker)) {
                            return true;
                        }
                    }
                    return false;
                }).orElse(false))
                .toList();
        for (ProcessHandle h : victims) {
            log.info("killing leftover sandbox process {}", h.pid());
            h.destroyForcibly();
        }
        for (ProcessHandle h : victims) {
            try {
                h.onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("leftover sandbox process {} did not exit: {}", h.pid(), e.toString());
            }
        }
    }

    static boolean exists(Path p) {
        return Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }
}
