package io.agentbox.worker.runtime.local;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.StartCommand;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.image.HostIdRange;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.agentbox.worker.runtime.net.SandboxNetwork;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code local} runtime: every sandbox is a container run by crun from a bundle the worker
 * writes (see {@link OciConfig}): own user namespace (ids 0..65535 are host ids
 * {@link HostIdRange#BASE}+), pid, ipc, uts, mount, cgroup and (unless the template's network is
 * "host") network namespaces, the template's limits in cgroup {@code /agentbox/<id>}, a seccomp
 * filter, and a private writable root: an overlay of the template's image layers (or, without an
 * image, the host's root seen through an idmapped bind plus a {@link MaskLayer}) under an
 * {@link EngineLayer} with a writable layer on a size-limited tmpfs (the template's diskSizeMb).
 *
 * <p>Every mount and crun call happens inside the {@link Holder}'s private mount namespace; the
 * holder deletes every container when the worker's JVM ends. Commands run with {@code crun exec}
 * (the container's capabilities, seccomp, no_new_privs and cgroup) as {@code user} (uid 1000) or
 * root. Layout: {@code <data>/sandboxes/<id>/} (bundle: config.json, pid, crun.log),
 * {@code <data>/crun/} (crun's state), {@code /run/agentbox/<hash of data>/} (a tmpfs in the
 * namespace: the idmapped host root, the mask layer, and per sandbox its engine layer, rootfs and
 * disk mount points).
 */
public final class LocalRuntime implements SandboxRuntime {
    /** uid/gid of "user" inside every sandbox. */
    public static final int SANDBOX_UID = EtcUsers.UID;
    /** Size of the namespace's tmpfs holding engine and mask layers (a few KiB per sandbox). */
    static final int RUN_MB = 256;
    static final long START_TIMEOUT_MS = 30_000;
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final Logger log = LoggerFactory.getLogger(LocalRuntime.class);

    /** $1 disk dir, $2 tmpfs size option, $3 rootfs, $4 lowerdir, $5 crun, $6 crun root, $7 bundle, $8 id, $9 root's host id. */
    private static final String START = "set -e\n"
            + "mount -t tmpfs -o \"$2\" agentbox-disk \"$1\"\n"
            + "mkdir -m 0755 \"$1/u\" \"$1/w\"\n"
            + "chown \"$9:$9\" \"$1/u\"\n"
            + "mount -t overlay -o \"userxattr,lowerdir=$4,upperdir=$1/u,workdir=$1/w\" agentbox-root \"$3\"\n"
            // the init inherits crun's stdio: never the worker's pipe, which would then never end
            + "\"$5\" --root \"$6\" run -d --pid-file \"$7/pid\" -b \"$7\" \"$8\" </dev/null >\"$7/crun.log\" 2>&1 "
            + "|| { cat \"$7/crun.log\"; exit 1; }\n";
    /**
     * The steps that start a sandbox's container on one pair of root and disk mounts (a reset
     * alternates two pairs, {@code r}/{@code d} and {@code r1}/{@code d1}, each with its own crun
     * container id and cgroup): $7 container id, $8 rootfs, $9 disk, ${10} tmpfs options, ${11}
     * lowerdir, ${12} bundle, ${13} root's host id. Whatever ran on that pair before (an ended
     * container, or none) is deleted while the pair's mounts are replaced, before crun runs the new
     * container under the same id; it joins the kept user and network namespaces (its config says so).
     */
    private static final String ON_PAIR = ""
            + "\"$1\" --root \"$2\" delete -f \"$7\" >/dev/null 2>&1 </dev/null &\n"
            + "old=$!\n"
            // one process for both (the overlay first: the tmpfs holds its upper); lazily when busy or not mounted
            + "umount \"$8\" \"$9\" 2>/dev/null || { umount -l \"$8\"; umount -l \"$9\"; } 2>/dev/null || true\n"
            + "[ -d \"$8\" ] && [ -d \"$9\" ] || mkdir -p \"$8\" \"$9\"\n"
            + "mount -t tmpfs -o \"${10}\" agentbox-disk \"$9\"\n"
            + "mkdir -m 0755 \"$9/u\" \"$9/w\"\n"
            + "chown \"${13}:${13}\" \"$9/u\"\n"
            + "mount -t overlay -o \"userxattr,lowerdir=${11},upperdir=$9/u,workdir=$9/w\" agentbox-root \"$8\"\n"
            + "wait $old || true\n"
            + "\"$1\" --root \"$2\" run -d --pid-file \"${12}/pid\" -b \"${12}\" \"$7\" </dev/null >\"${12}/crun.log\" 2>&1 "
            + "|| { cat \"${12}/crun.log\"; exit 1; }\n";
    /**
     * $4 the sandbox's run dir, $5 its init's pid, $6 "1" when it has its own network namespace: keeps
     * the user and network namespaces in nsfs binds under the run dir (once per sandbox), for the
     * containers a reset starts to join.
     */
    private static final String KEEP_NAMESPACES = ""
            + "if [ ! -e \"$4/nu\" ]; then\n"
            + "  : >\"$4/nu\"; mount --bind \"/proc/$5/ns/user\" \"$4/nu\"\n"
            + "  if [ \"$6\" = 1 ]; then : >\"$4/nn\"; mount --bind \"/proc/$5/ns/net\" \"$4/nn\"; fi\n"
            + "fi\n";
    /**
     * A reset without a standby: $1 crun, $2 crun root, $3 the running container, then
     * {@link #KEEP_NAMESPACES}' and {@link #ON_PAIR}'s for the other pair. Deletes the running
     * container in the background while the other pair starts, and waits for that delete.
     */
    private static final String RESET = "set -e\n"
            + KEEP_NAMESPACES
            + "\"$1\" --root \"$2\" delete -f \"$3\" >/dev/null 2>&1 </dev/null &\n"
            + "del=$!\n"
            + ON_PAIR
            + "wait $del || true\n";
    /** A standby for the next reset: {@link #KEEP_NAMESPACES} and {@link #ON_PAIR} ($3 unused). */
    private static final String STANDBY = "set -e\n" + KEEP_NAMESPACES + ON_PAIR;
    /**
     * $1 crun, $2 crun root, $3 the running container, whose processes all get SIGKILL: what a reset
     * onto a standby does when it cannot signal the init itself.
     */
    private static final String RETIRE = "\"$1\" --root \"$2\" kill --all \"$3\" KILL >/dev/null 2>&1 "
            + "|| \"$1\" --root \"$2\" delete -f \"$3\" >/dev/null 2>&1 || true\n";
    /**
     * $1 crun, $2 crun root, $3 id, $4 rootfs, $5 disk, $6 engine dir: deletes the container (SIGKILL) and the
     * one of the other pair of a reset ({@code <id>.1} on {@code r1} and {@code d1}), unmounts, removes.
     */
    private static final String KILL = "\"$1\" --root \"$2\" delete -f \"$3\" >/dev/null 2>&1 || true\n"
            + "\"$1\" --root \"$2\" delete -f \"$3\".1 >/dev/null 2>&1 || true\n"
            + "for m in \"$4\" \"$4\"1 \"$5\" \"$5\"1; do if mountpoint -q \"$m\"; then umount \"$m\" 2>/dev/null || umount -l \"$m\"; fi; done\n"
            + "for n in \"$6/nu\" \"$6/nn\"; do [ -e \"$n\" ] && { umount \"$n\" 2>/dev/null || umount -l \"$n\" 2>/dev/null; }; done\n"
            + "rm -rf --one-file-system \"$6\"\n";

    private final HostTools tools;
    /** Starts the standby containers of sandboxes, off the reset's (or claim's) own call. */
    private final ExecutorService standbys = Executors.newFixedThreadPool(2,
            DaemonThreads.named("agentbox-reset-standby"));
    private final Cgroups cgroups;
    private final Path sandboxesDir;
    private final Path crunRoot;
    private final Path runDir;
    private final Holder holder;
    private final HostRoot hostRoot;
    private final Function<Template, SandboxImage> images;
    private final SandboxNetwork network;
    private final long nofileHard;
    /** The spawner binary as crun binds it (on the namespace's tmpfs), or null: catatonit and crun exec per command. */
    private final Path spawner;
    private final Set<LocalSandbox> live = ConcurrentHashMap.newKeySet();
    /** Templates (and snapshots) a sandbox of which was reset here: their claims get a standby ahead of the first reset. */
    private final Set<String> resetTemplates = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** A runtime for templates without an image only, with no network for "isolated". */
    public LocalRuntime(Path dataDir) {
        this(dataDir, List.of());
    }

    /** @param alsoHidden more host directories every sandbox of the host root sees empty (e.g. the hub's store) */
    public LocalRuntime(Path dataDir, List<Path> alsoHidden) {
        this(dataDir, alsoHidden, null, null);
    }

    /**
     * @param dataDir worker data directory (sandboxes, crun state and the namespace's tmpfs live under it)
     * @param alsoHidden more host directories every sandbox of the host root sees empty
     * @param images root file system of templates with an image; it throws a StatusRuntimeException
     *     (e.g. UNAVAILABLE while pulling) that start passes on; null: such templates fail with FAILED_PRECONDITION
     * @param network connects "isolated" sandboxes (the runtime owns it and closes it); null: they get
     *     loopback only ("none"), logged once
     * @throws IllegalStateException when the worker is not root, a host program is missing or the
     *     data directory is unusable
     */
    public LocalRuntime(Path dataDir, List<Path> alsoHidden, Function<Template, SandboxImage> images,
                        SandboxNetwork network) {
        this.tools = HostTools.detect();
        this.cgroups = Cgroups.detect();
        this.images = images;
        this.network = network;
        if (network == null) {
            log.info("local runtime has no sandbox network: templates with network 'isolated' get loopback only "
                    + "(no outbound internet)");
        }
        this.nofileHard = hardNofile();
        Holder h = null;
        try {
            Files.createDirectories(dataDir);
            Path real = dataDir.toRealPath();
            if (real.toString().contains(",") || real.toString().contains(":")) {
                throw new IllegalStateException("the data directory " + real + " must not contain ',' or ':' "
                        + "(overlay mount options)");
            }
            this.sandboxesDir = real.resolve("sandboxes");
            this.crunRoot = real.resolve("crun");
            this.runDir = runDirFor(real);
            Files.createDirectories(sandboxesDir);
            Files.createDirectories(crunRoot);
            Files.createDirectories(runDir);
            Files.setAttribute(runDir.getParent(), "unix:mode", 0711);
            Files.setAttribute(runDir, "unix:mode", 0711);
            Files.setAttribute(sandboxesDir, "unix:mode", 0711);
            cgroups.prepare();
            h = Holder.start(tools, crunRoot, runDir, RUN_MB, cgroups.mode == Cgroups.Mode.HYBRID);
            this.holder = h;
            removeLeftovers();
            List<Path> hidden = new ArrayList<>();
            for (String p : MaskLayer.ALWAYS_HIDDEN) {
                hidden.add(Path.of(p));
            }
            hidden.add(real);
            hidden.addAll(alsoHidden);
            this.hostRoot = HostRoot.prepare(tools, holder, runDir, hidden);
            this.spawner = installSpawner(real);
        } catch (IOException e) {
            if (h != null) {
                h.close();
            }
            throw new IllegalStateException("cannot prepare the sandbox directories under " + dataDir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (h != null) {
                h.close();
            }
            throw e;
        }
    }

    @Override
    public String name() {
        return "local";
    }

    /** Directory holding one bundle directory per live sandbox. */
    public Path sandboxesDir() {
        return sandboxesDir;
    }

    HostTools tools() {
        return tools;
    }

    Holder holder() {
        return holder;
    }

    Path crunRoot() {
        return crunRoot;
    }

    Cgroups cgroups() {
        return cgroups;
    }

    /** True when sandboxes run the spawner as PID 1 and commands start through it. */
    public boolean hasSpawner() {
        return spawner != null;
    }

    /**
     * Copies the compiled spawner onto the namespace's tmpfs, where the sandbox's user namespace
     * can reach it (a data directory below /root would not let crun bind it from there).
     *
     * @return its path inside the namespace; null without a spawner
     */
    private Path installSpawner(Path dataDir) throws IOException {
        Optional<Path> built = SpawnerBinary.prepare(dataDir);
        if (built.isEmpty()) {
            return null;
        }
        Path inside = runDir.resolve("spawner");
        Path view = holder.view(inside);
        Path tmp = view.resolveSibling("spawner.tmp");
        Files.copy(built.get(), tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.setAttribute(tmp, "unix:mode", 0755);
        Files.move(tmp, view, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return inside;
    }

    /** The init's name once it runs ({@code /proc/<pid>/comm} of {@code /.agentbox/init}). */
    private static final String INIT_COMM = "init";

    /**
     * Waits until the container's first process has exec'd its init. {@code crun run -d} returns
     * once that process was told to start, which can be before its execve; until then it is not
     * dumpable, and a {@code crun exec} joining its namespaces fails with EPERM
     * ("setns(pid=…, CLONE_*): Operation not permitted", about one start in 75 on a loaded machine).
     *
     * @return the init, running (its handle signals it only while it is that process, not a later one with its pid)
     * @throws StatusRuntimeException UNAVAILABLE when the init is gone or does not run within the start timeout
     */
    static ProcessHandle awaitInit(String sandboxId, long initPid) {
        Path comm = Path.of("/proc/" + initPid + "/comm");
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        try {
            for (int spins = 0; !Files.readString(comm).strip().equals(INIT_COMM); spins++) {
                if (System.nanoTime() > deadline) {
                    throw Status.UNAVAILABLE.withDescription("sandbox " + sandboxId + ": its init did not start within "
                            + START_TIMEOUT_MS + " ms").asRuntimeException();
                }
                if (spins < 50) {
                    Thread.onSpinWait();
                } else {
                    // parkNanos: JDK 17's Thread.sleep(0, n) sleeps a whole millisecond
                    LockSupport.parkNanos(200_000);
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
            }
            return ProcessHandle.of(initPid).orElseThrow(() -> new IOException("gone"));
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("sandbox " + sandboxId + ": its init ended while starting")
                    .asRuntimeException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted while starting sandbox " + sandboxId).asRuntimeException();
        }
    }

    /**
     * The worker fills this runtime's pools itself: its warm pool over {@link #start(String, Template, Optional)},
     * plus, for a built template with a start command, that command started and its ready command
     * passed before the sandbox counts as idle ({@link StartCommand}).
     */
    @Override
    public RuntimePool openPool(Template template, PoolContext context) {
        return new StandbyOnClaim(this, context.warmPool(template, (id, t, image) -> {
            RuntimeSandbox sandbox = start(id, t, image);
            try {
                StartCommand.apply(sandbox, image);
            } catch (RuntimeException e) {
                sandbox.kill();
                throw e;
            }
            return sandbox;
        }));
    }

    /**
     * Called for every sandbox a pool of this runtime hands out: starts its standby container
     * when a sandbox of the same template was reset here before, so that its first reset finds one.
     */
    void claimed(RuntimeSandbox sandbox) {
        if (sandbox instanceof LocalSandbox local && resetTemplates.contains(local.launch().template())) {
            local.prepareStandby();
        }
    }

    /** Notes that a sandbox of {@code template} is being reset: later claims of it get a standby at once. */
    void resetting(String template) {
        resetTemplates.add(template);
    }

    /** The pool of {@code template} retired (the template or snapshot is gone): forgets its resets. */
    void templateGone(String template) {
        resetTemplates.remove(template);
    }

    /**
     * Starts a sandbox of {@code template}: from its image through the resolver this runtime was
     * made with, or from the host's root when the template has no image (tests and benches).
     */
    public RuntimeSandbox start(String sandboxId, Template template) {
        if (template.getImage().isEmpty()) {
            return start(sandboxId, template, Optional.empty());
        }
        if (images == null) {
            throw Status.FAILED_PRECONDITION.withDescription("template '" + template.getName() + "' names image '"
                    + template.getImage() + "' but this worker has no image store").asRuntimeException();
        }
        return start(sandboxId, template, Optional.of(images.apply(template)));
    }

    /**
     * Starts one idle sandbox of {@code template} from {@code image} as the worker prepared it
     * ({@code Optional.empty()}: the host's root) and returns once commands can run in it.
     *
     * @throws StatusRuntimeException UNAVAILABLE when the sandbox cannot be started
     */
    public RuntimeSandbox start(String sandboxId, Template template, Optional<SandboxImage> image) {
        if (closed) {
            throw Status.UNAVAILABLE.withDescription("local runtime is shut down").asRuntimeException();
        }
        if (!ID.matcher(sandboxId).matches()) {
            throw Status.INVALID_ARGUMENT.withDescription("invalid sandbox id '" + sandboxId + "'").asRuntimeException();
        }
        String net = template.getNetwork().isEmpty() ? "isolated" : template.getNetwork();
        if (!List.of("host", "none", "isolated").contains(net)) {
            throw Status.INVALID_ARGUMENT.withDescription("template '" + template.getName() + "': unknown network '"
                    + net + "' (use isolated, none or host)").asRuntimeException();
        }
        List<String> lowerdirs = new ArrayList<>();
        Lowers lowers;
        ImageConfig config;
        Path engineInside = runDir.resolve(sandboxId).resolve("e");
        lowerdirs.add(engineInside.toString());
        if (image.isEmpty()) {
            lowerdirs.addAll(hostRoot.lowerdirs());
            lowers = hostRoot.lowers();
            config = ImageConfig.EMPTY;
        } else {
            List<Path> topFirst = new ArrayList<>(image.get().layers());
            Collections.reverse(topFirst);
            for (Path p : topFirst) {
                lowerdirs.add(p.toString());
            }
            if (image.get().onBuiltInRoot()) {
                // a template built on 'base', or a snapshot of a sandbox of it or of 'base': its
                // layers over the mask and the host root (one read-only overlay of those, mounted once
                // per runtime: overlayfs refuses a store layer beside / itself, ELOOP)
                lowerdirs.addAll(topFirst.isEmpty() ? hostRoot.lowerdirs() : hostRoot.stackedLowerdir());
                lowers = new Lowers(topFirst, 0, hostRoot.lowers());
            } else {
                lowers = new Lowers(topFirst, 0);
            }
            config = image.get().config();
        }
        String lowerdir = String.join(":", lowerdirs);
        if (lowerdir.length() > 3500 || lowerdirs.stream().anyMatch(p -> p.contains(",") || p.contains(":"))) {
            throw Status.FAILED_PRECONDITION.withDescription("template '" + template.getName() + "': its " + lowerdirs.size()
                    + " layers do not fit one overlay mount (" + lowerdir.length() + " bytes of layer paths)")
                    .asRuntimeException();
        }
        Path bundle = sandboxesDir.resolve(sandboxId);
        Path rootfs = runDir.resolve(sandboxId).resolve("r");
        Path disk = runDir.resolve(sandboxId).resolve("d");
        OciConfig.Spec spec = new OciConfig.Spec(sandboxId, rootfs, !"host".equals(net),
                template.getMemoryMb(), template.getCpuCount(), template.getPidsLimit(),
                spawner != null ? spawner : tools.catatonit, spawner != null, tools.busybox, nofileHard, cgroups.swapLimit);
        String size = "mode=0755" + (template.getDiskSizeMb() > 0 ? ",size=" + template.getDiskSizeMb() + "m" : "");
        try {
            Files.createDirectory(bundle);
            Path engineHost = holder.view(engineInside);
            Files.createDirectory(engineHost.getParent());
            Files.createDirectory(holder.view(rootfs));
            Files.createDirectory(holder.view(disk));
            String resolv = "host".equals(net) ? hostResolvConf() : "";
            EngineLayer.write(engineHost, sandboxId, lowers, resolv);
            OciConfig.write(bundle.resolve("config.json"), spec);
        } catch (IOException | RuntimeException e) {
            removeFiles(sandboxId);
            throw e instanceof StatusRuntimeException s ? s : Status.UNAVAILABLE.withDescription("cannot prepare sandbox "
                    + sandboxId + ": " + e.getMessage()).withCause(e).asRuntimeException();
        }
        ProcessHandle init;
        try {
            holder.sh("starting sandbox " + sandboxId, START, List.of(disk.toString(), size, rootfs.toString(), lowerdir,
                    tools.crun.toString(), crunRoot.toString(), bundle.toString(), sandboxId,
                    Integer.toString(HostIdRange.BASE)), START_TIMEOUT_MS);
            init = awaitInit(sandboxId, Long.parseLong(Files.readString(bundle.resolve("pid")).strip()));
        } catch (IOException | RuntimeException e) {
            removeFiles(sandboxId);
            throw e instanceof StatusRuntimeException s ? s : Status.UNAVAILABLE.withDescription("sandbox " + sandboxId
                    + " started without a pid: " + e.getMessage()).asRuntimeException();
        }
        SandboxNetwork.Attachment attachment = null;
        if ("isolated".equals(net) && network != null) {
            try {
                attachment = network.attach(sandboxId, init.pid());
                StringBuilder resolv = new StringBuilder();
                for (var ns : attachment.nameservers()) {
                    resolv.append("nameserver ").append(ns.getHostAddress()).append('\n');
                }
                // in place: the file is in a lower layer the sandbox has not copied up yet
                Files.writeString(holder.view(engineInside.resolve("etc/resolv.conf")), resolv.toString(),
                        StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                if (attachment != null) {
                    network.detach(attachment);
                }
                removeFiles(sandboxId);
                throw e instanceof StatusRuntimeException s ? s : Status.UNAVAILABLE.withDescription("cannot connect sandbox "
                        + sandboxId + ": " + e.getMessage()).asRuntimeException();
            }
        }
        long diskBytes = template.getDiskSizeMb() > 0 ? template.getDiskSizeMb() * 1024L * 1024L : Long.MAX_VALUE;
        LocalSandbox sandbox = new LocalSandbox(sandboxId, this, init, config, attachment,
                new LocalSandbox.Launch(template.getName(), image, spec, lowerdir, size, diskBytes));
        live.add(sandbox);
        if (closed) {
            sandbox.kill();
            throw Status.UNAVAILABLE.withDescription("local runtime is shut down").asRuntimeException();
        }
        return sandbox;
    }

    /** Sandbox {@code id}'s writable layer (its tmpfs), as the host reaches it. */
    Path diskView(LocalSandbox sandbox) {
        return holder.view(diskOf(sandbox.id(), sandbox.layerSet()));
    }

    /**
     * Starts {@code sandbox}'s container again on a fresh writable layer over the same lowers, in
     * its own user and network namespaces (kept in nsfs binds under its run dir), so its id,
     * address and network interface stay; every process ends. Returns the new init.
     *
     * @throws StatusRuntimeException UNAVAILABLE when a step fails (the caller kills the sandbox)
     */
    ProcessHandle restart(LocalSandbox sandbox, LocalSandbox.Launch launch, long oldInitPid, int fromSet) {
        String id = sandbox.id();
        Path run = runDir.resolve(id);
        int toSet = 1 - fromSet;
        try {
            List<String> args = new ArrayList<>(List.of(tools.crun.toString(), crunRoot.toString(), containerOf(id, fromSet),
                    run.toString(), Long.toString(oldInitPid), launch.spec().ownNetwork() ? "1" : "0"));
            args.addAll(onPair(sandbox, launch, toSet));
            holder.sh("resetting sandbox " + id, RESET, args, START_TIMEOUT_MS);
            return awaitInit(id, Long.parseLong(Files.readString(bundleOf(id, toSet).resolve("pid")).strip()));
        } catch (IOException | NumberFormatException e) {
            throw Status.UNAVAILABLE.withDescription("cannot reset sandbox " + id + ": " + e.getMessage()).asRuntimeException();
        }
    }

    /**
     * Starts, in the background, a standby container of {@code sandbox} on pair {@code set} (a fresh
     * writable layer, only its init running, in the namespaces of the init now running, which it
     * keeps in nsfs binds the first time), for the next reset to switch to. Whatever ran on that
     * pair before is deleted first.
     *
     * @param initPid the sandbox's init now running
     */
    Standby standby(LocalSandbox sandbox, LocalSandbox.Launch launch, long initPid, int set) {
        return Standby.start(standbys, () -> {
            String id = sandbox.id();
            if (!sandbox.isAlive() || closed) {
                throw new IllegalStateException("sandbox " + id + " ended");
            }
            try {
                List<String> args = new ArrayList<>(List.of(tools.crun.toString(), crunRoot.toString(), "",
                        runDir.resolve(id).toString(), Long.toString(initPid), launch.spec().ownNetwork() ? "1" : "0"));
                args.addAll(onPair(sandbox, launch, set));
                holder.sh("starting the standby of sandbox " + id, STANDBY, args, START_TIMEOUT_MS);
                return awaitInit(id, Long.parseLong(Files.readString(bundleOf(id, set).resolve("pid")).strip()));
            } catch (IOException | NumberFormatException e) {
                throw Status.UNAVAILABLE.withDescription("standby of sandbox " + id + ": " + e.getMessage()).asRuntimeException();
            }
        });
    }

    /** Ends every process of the container on pair {@code set} with crun (SIGKILL); the standby task on that pair deletes it. */
    void retire(LocalSandbox sandbox, int set) {
        holder.sh("resetting sandbox " + sandbox.id(), RETIRE, List.of(tools.crun.toString(), crunRoot.toString(),
                containerOf(sandbox.id(), set)), START_TIMEOUT_MS);
    }

    /** {@link #ON_PAIR}'s arguments for pair {@code set}, its config written. */
    private List<String> onPair(LocalSandbox sandbox, LocalSandbox.Launch launch, int set) throws IOException {
        String id = sandbox.id();
        Path run = runDir.resolve(id);
        Path bundle = bundleOf(id, set);
        Files.createDirectories(bundle);
        OciConfig.write(bundle.resolve("config.json"), launch.spec().asContainer(containerOf(id, set), rootfsOf(id, set))
                .joining(run.resolve("nu"), run.resolve("nn")));
        return List.of(containerOf(id, set), rootfsOf(id, set).toString(), diskOf(id, set).toString(), launch.diskOptions(),
                launch.lowerdir(), bundle.toString(), Integer.toString(HostIdRange.BASE));
    }

    /** The crun container (and cgroup {@code /agentbox/<name>}) of a sandbox on pair {@code set}. */
    static String containerOf(String id, int set) {
        return set == 0 ? id : id + ".1";
    }

    private Path bundleOf(String id, int set) {
        return set == 0 ? sandboxesDir.resolve(id) : sandboxesDir.resolve(id).resolve("g1");
    }

    /** The root file system mount of a sandbox: {@code r}, or {@code r1} after an odd number of resets. */
    private Path rootfsOf(String id, int set) {
        return runDir.resolve(id).resolve(set == 0 ? "r" : "r1");
    }

    /** The writable layer's tmpfs of a sandbox: {@code d}, or {@code d1} after an odd number of resets. */
    private Path diskOf(String id, int set) {
        return runDir.resolve(id).resolve(set == 0 ? "d" : "d1");
    }

    /** The sandbox's writable layer (the overlay's upper directory) as the worker reaches it. */
    Path upperOf(LocalSandbox sandbox) {
        return holder.view(diskOf(sandbox.id(), sandbox.layerSet()).resolve("u"));
    }

    /** Layer directories the live sandboxes (idle ones included) run on; the image store keeps them. */
    public Collection<Path> layersInUse() {
        Set<Path> out = new HashSet<>();
        for (LocalSandbox s : live) {
            s.launch().image().ifPresent(i -> out.addAll(i.layers()));
        }
        return out;
    }

    /**
     * The writable layer (overlay upper directory, on the sandbox's tmpfs) of a live sandbox of
     * this runtime, as the worker reads it through the holder's namespace: what the sandbox changed,
     * in overlayfs form (whiteouts as character devices 0/0, {@code user.overlay.opaque} on opaque
     * directories, owners as host ids). Read it while the sandbox is frozen or idle: overlayfs does
     * not promise a consistent view of an upper directory that changes under it.
     *
     * @throws IllegalArgumentException when {@code sandbox} is not a live sandbox of this runtime
     */
    public Path writableLayer(RuntimeSandbox sandbox) {
        if (!(sandbox instanceof LocalSandbox local) || !live.contains(local)) {
            throw new IllegalArgumentException(sandbox.id() + " is not a live sandbox of this runtime");
        }
        return upperOf(local);
    }

    /** Deletes the container and everything of it; idempotent, logs what it could not remove. */
    void destroy(LocalSandbox sandbox) {
        sandbox.settleStandby(); // a standby being started must not come up after the kill
        if (sandbox.attachment() != null && network != null) {
            try {
                network.detach(sandbox.attachment());
            } catch (RuntimeException e) {
                log.warn("cannot detach the network of sandbox {}: {}", sandbox.id(), e.toString());
            }
        }
        removeFiles(sandbox.id());
        live.remove(sandbox);
    }

    private void removeFiles(String id) {
        Path bundle = sandboxesDir.resolve(id);
        Path rootfs = runDir.resolve(id).resolve("r");
        Path disk = runDir.resolve(id).resolve("d");
        try {
            if (holder.isAlive()) {
                holder.sh("removing sandbox " + id, KILL, List.of(tools.crun.toString(), crunRoot.toString(), id,
                        rootfs.toString(), disk.toString(), runDir.resolve(id).toString()), START_TIMEOUT_MS);
            }
        } catch (RuntimeException e) {
            log.warn("cannot remove the container of sandbox {}: {}", id, e.getMessage());
        }
        try {
            Trees.deleteRecursively(bundle);
        } catch (IOException e) {
            log.warn("cannot delete the bundle of sandbox {} at {}: {}", id, bundle, e.toString());
        }
    }

    @Override
    public void close() {
        closed = true;
        List<Thread> killers = new ArrayList<>();
        for (LocalSandbox s : new ArrayList<>(live)) {
            Thread t = new Thread(s::kill, "sandbox-kill-" + s.id());
            t.start();
            killers.add(t);
        }
        for (Thread t : killers) {
            try {
                t.join(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        standbys.shutdownNow();
        holder.close();
        if (network != null) {
            network.close();
        }
        try {
            Files.deleteIfExists(runDir);
        } catch (IOException e) {
            log.warn("cannot remove {}: {}", runDir, e.toString());
        }
    }

    /**
     * Where the runtime's namespace keeps its tmpfs: below /run (mode 0755), because crun sets up
     * the root file system from inside the sandbox's user namespace, whose root may only pass
     * directories that let others search them (a data directory below /root would not).
     */
    static Path runDirFor(Path dataDir) {
        String hash;
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(dataDir.toString().getBytes(StandardCharsets.UTF_8));
            hash = HexFormat.of().formatHex(d, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Path base = Files.isDirectory(Path.of("/run")) ? Path.of("/run/agentbox") : Path.of("/tmp/agentbox-run");
        return base.resolve(hash);
    }

    /** Deletes containers, cgroups and bundles a previous worker on this data directory left behind. */
    private void removeLeftovers() throws IOException {
        String listed = holder.sh("listing leftover containers", "\"$1\" --root \"$2\" list -q", List.of(
                tools.crun.toString(), crunRoot.toString()), START_TIMEOUT_MS);
        List<String> ids = new ArrayList<>(listed.lines().map(String::strip).filter(s -> !s.isEmpty()).toList());
        try (var s = Files.list(sandboxesDir)) {
            for (Path p : s.toList()) {
                String id = p.getFileName().toString();
                if (!ids.contains(id)) {
                    ids.add(id);
                }
            }
        }
        for (String id : ids) {
            log.info("removing leftover sandbox {} of a previous worker", id);
            removeFiles(id);
            for (Path cg : cgroups.dirsOf(id)) {
                killAndRemove(cg);
            }
        }
    }

    /** Kills what is left in a cgroup directory and removes it (crun normally does this). */
    private static void killAndRemove(Path cgroup) {
        for (int i = 0; i < 50; i++) {
            try {
                String procs = Files.readString(cgroup.resolve("cgroup.procs")).strip();
                if (procs.isEmpty()) {
                    Files.deleteIfExists(cgroup);
                    return;
                }
                for (String pid : procs.split("\\s+")) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                }
                Thread.sleep(20);
            } catch (IOException | NumberFormatException e) {
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        log.warn("leftover cgroup {} did not empty", cgroup);
    }

    private static String hostResolvConf() {
        try {
            String s = Files.readString(Path.of("/etc/resolv.conf"));
            return s.length() > 64 * 1024 ? "" : s;
        } catch (IOException e) {
            return "";
        }
    }

    /** The worker's hard RLIMIT_NOFILE: a sandbox may not get more (crun fails setting a higher one). */
    private static long hardNofile() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return f[1].equals("unlimited") ? 1_048_576L : Long.parseLong(f[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        }
        return 1024;
    }

    static boolean exists(Path p) {
        return Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }
}
