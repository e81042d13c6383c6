package io.agentbox.worker.build;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.BuiltImageLabels;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.registry.Platform;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.Lease;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.worker.image.unpack.LayerUnpacker;
import io.agentbox.worker.image.unpack.LowerLayers;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.image.HostIdRange;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxCommand;
import io.agentbox.worker.runtime.StartCommand;
import io.agentbox.worker.runtime.local.LocalRuntime;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Builds a template image on this worker (issue 14, E2B's {@code Template.build}:
 * docs/e2b-wire.md#build-spec, docs/e2b-wire.md#build-semantics). Every step that changes files runs in a fresh sandbox of the
 * local runtime started from the layers so far (network {@code isolated}: outbound internet through
 * NAT, nothing of the host), and what the sandbox changed — its writable layer — becomes the step's
 * layer in the image store. ENV and USER steps only change the context of later steps. The result
 * is an image in the store, named {@link BuildSpec#reference()}, whose config carries the final
 * USER and WORKDIR and the labels of {@link BuiltImageLabels}.
 *
 * <p>Steps are cached by (layers below, step, user, workdir, ENV, archive hash) unless the step or
 * the build is forced. A failing step ends the build with a {@link BuildFailure} naming the step as
 * E2B numbers it. Thread-safe: builds run in parallel, each in its own sandboxes.
 */
public final class TemplateBuilder {
    /** Longest a single RUN (or COPY, WORKDIR) step may run. */
    public static final long STEP_TIMEOUT_MS = 60 * 60_000L;
    /** Owner names a COPY may give: {@code user} or {@code user:group}. */
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._][A-Za-z0-9._-]{0,31}(:[A-Za-z0-9._][A-Za-z0-9._-]{0,31})?");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BB = SandboxCommand.BUSYBOX;
    /** COPY placement, run as root: $1 staged source, $2 target, $3 owner, $4 mode (may be empty), $5 source as given. */
    static final String COPY = "B=" + BB + "; s=$1; d=$2\n"
            + "if [ ! -e \"$s\" ] && [ ! -L \"$s\" ]; then echo \"source path does not exist: $5\" >&2; exit 2; fi\n"
            + "$B chown -R -h \"$3\" \"$s\" || exit 3\n"
            + "if [ -n \"$4\" ] && [ ! -L \"$s\" ]; then $B chmod -R \"$4\" \"$s\" || exit 3; fi\n"
            + "if [ -d \"$s\" ] && [ ! -L \"$s\" ]; then $B mkdir -p \"$d\" && exec $B cp -a \"$s/.\" \"$d/\"; fi\n"
            + "case $d in */) $B mkdir -p \"$d\" && t=\"$d${s##*/}\";; *) $B mkdir -p \"$($B dirname \"$d\")\" && t=$d;; esac || exit 3\n"
            + "if [ -L \"$t\" ] || { [ -e \"$t\" ] && [ ! -d \"$t\" ]; }; then $B rm -f \"$t\"; fi\n"
            + "exec $B cp -a \"$s\" \"$t\"\n";
    /** WORKDIR, run as root: creates the missing components of $1, each owned by $2. */
    static final String WORKDIR = "B=" + BB + "; set -f; p=; IFS=/\nfor c in $1; do [ -z \"$c\" ] && continue; p=\"$p/$c\"\n"
            + "  if [ ! -e \"$p\" ]; then \"$B\" mkdir \"$p\" && \"$B\" chown \"$2\" \"$p\" || exit 1; fi\ndone\n";
    private static final AtomicLong SANDBOXES = new AtomicLong();

    private final LocalRuntime runtime;
    private final ImageStore store;
    private final BaseImages bases;
    private final BuildCache cache;
    private final LayerUnpacker unpacker = LayerUnpacker.forThisKernel();

    /** Where a build's base image comes from: the store, or a pull into it. */
    @FunctionalInterface
    public interface BaseImages {
        /** @throws IOException naming the image and why it cannot be had */
        StoredImage get(String reference) throws IOException;
    }

    /**
     * The result of a build.
     *
     * @param image the image recorded under the spec's reference
     * @param user the final USER (the default user of the template's sandboxes)
     * @param workdir the final WORKDIR, empty when none was set
     * @param stepsRun steps that ran in a sandbox
     * @param stepsCached steps whose layer came from the cache
     */
    public record Result(StoredImage image, String user, String workdir, int stepsRun, int stepsCached) {}

    /**
     * @param workerDataDir the worker's data directory; the step cache lives in {@code builds/cache} below it
     * @param bases finds or pulls base images ({@code fromImage}, or the image of a {@code fromTemplate})
     */
    public TemplateBuilder(LocalRuntime runtime, ImageStore store, BaseImages bases, Path workerDataDir) throws IOException {
        this.runtime = runtime;
        this.store = store;
        this.bases = bases;
        this.cache = new BuildCache(workerDataDir.resolve("builds").resolve("cache"));
    }

    /** The current user, WORKDIR and ENV of a build, as later steps see them. */
    private static final class Context {
        String user;
        String workdir;
        final Map<String, String> env = new LinkedHashMap<>();

        Context(String user, String workdir) {
            this.user = user;
            this.workdir = workdir;
        }

        String home(String who) {
            return LaunchSpec.ROOT.equals(who) ? "/root" : "/home/user";
        }

        String cwd(String who) {
            return workdir.isEmpty() ? home(who) : workdir;
        }
    }

    /**
     * Runs {@code spec}.
     *
     * @param archives the uploaded COPY archives by {@link BuildStep#filesHash()} (gzip or plain tar)
     * @param log gets the build's lines as they come
     * @throws BuildFailure naming the step and what failed
     * @throws InterruptedException when the build was cancelled (its sandbox is killed)
     */
    public Result build(BuildSpec spec, Map<String, Path> archives, BuildLog log) throws BuildFailure, InterruptedException {
        // the layers and blobs of steps already run are no image's until the end: GC must leave them
        try (Lease lease = store.lease()) {
            return build(lease, spec, archives, log);
        }
    }

    private Result build(Lease lease, BuildSpec spec, Map<String, Path> archives, BuildLog log)
            throws BuildFailure, InterruptedException {
        long started = System.nanoTime();
        // ---- base
        List<StoredImage.Layer> layers = new ArrayList<>();
        ImageConfig baseConfig;
        boolean onRoot;
        String identity;
        Context ctx;
        if (spec.baseImage().isEmpty()) {
            log.line("info", "base", "FROM the built-in root (template 'base')");
            baseConfig = ImageConfig.EMPTY;
            onRoot = true;
            identity = BuiltImageLabels.BUILT_IN_ROOT;
            ctx = new Context(LaunchSpec.USER, "");
        } else {
            log.line("info", "base", "FROM " + spec.baseImage());
            StoredImage base;
            try {
                base = bases.get(spec.baseImage());
            } catch (IOException | RuntimeException e) {
                throw new BuildFailure("base", "cannot get the base image " + spec.baseImage() + ": " + e.getMessage(), e);
            }
            hold(lease, base);
            layers.addAll(base.layers());
            baseConfig = base.config();
            onRoot = BuiltImageLabels.onBuiltInRoot(baseConfig);
            identity = base.manifestDigest();
            if (spec.fromTemplate()) {
                ctx = new Context(baseConfig.user().isEmpty() ? LaunchSpec.USER : baseConfig.user(), baseConfig.workingDir());
                ctx.env.putAll(BuiltImageLabels.buildEnv(baseConfig));
            } else {
                ctx = new Context(LaunchSpec.USER, ""); // E2B's default user phase: steps run as 'user' (docs/e2b-wire.md#default-user-phase)
            }
        }
        requireUser(ctx.user, "base");
        int run = 0;
        int cached = 0;
        int total = spec.steps().size();
        for (int i = 0; i < total; i++) {
            if (Thread.interrupted()) {
                throw new InterruptedException("build " + spec.buildId() + " cancelled");
            }
            BuildStep step = spec.steps().get(i);
            String n = Integer.toString(i + 1);
            String problem = step.problem();
            if (problem != null) {
                throw new BuildFailure(n, problem);
            }
            String label = "[builder " + n + "/" + total + "] " + step.describe();
            switch (step.kind()) {
                case "ENV" -> {
                    Map<String, String> vars = expansionVars(ctx, baseConfig);
                    for (int k = 0; k < step.args().size(); k += 2) {
                        String value = EnvExpansion.expand(step.args().get(k + 1), vars);
                        ctx.env.put(step.args().get(k), value);
                        vars.put(step.args().get(k), value);
                    }
                    log.line("info", n, label);
                    continue;
                }
                case "USER" -> {
                    requireUser(step.args().get(0), n);
                    ctx.user = step.args().get(0);
                    log.line("info", n, label);
                    continue;
                }
                default -> { }
            }
            String key = BuildCache.key(identity, diffIds(layers).toString(), step.kind(), JSON.valueToTree(step.args()).toString(),
                    step.filesHash(), ctx.user, ctx.workdir, JSON.valueToTree(ctx.env).toString());
            String newWorkdir = step.kind().equals("WORKDIR") ? StepPaths.resolve(ctx.workdir.isEmpty() ? "/" : ctx.workdir,
                    step.args().get(0)).replaceAll("(.)/$", "$1") : null;
            Optional<BuildCache.Entry> hit = spec.force() || step.force() ? Optional.empty() : cache.get(key);
            Optional<StoredImage.Layer> reused = Optional.empty();
            if (hit.isPresent() && !hit.get().empty()) {
                try {
                    reused = store.findLayer(lease, hit.get().layer(), hit.get().diffId());
                } catch (IOException e) {
                    reused = Optional.empty();
                }
            }
            if (hit.isPresent() && (hit.get().empty() || reused.isPresent())) {
                log.line("info", n, "CACHED " + label);
                reused.ifPresent(layers::add);
                cached++;
            } else {
                log.line("info", n, label);
                Optional<StoredImage.Layer> made = runStep(lease, spec, step, n, ctx, layers, onRoot, baseConfig, archives, newWorkdir, log);
                made.ifPresent(layers::add);
                try {
                    cache.put(key, made.map(l -> new BuildCache.Entry(new Descriptor(l.mediaType(),
                            l.digest(), l.size()), l.diffId())).orElse(BuildCache.Entry.EMPTY));
                } catch (IOException e) {
                    log.line("warn", n, "cannot record the step in the build cache: " + e.getMessage());
                }
                run++;
            }
            if (newWorkdir != null) {
                ctx.workdir = newWorkdir;
            }
        }
        // ---- finalize
        byte[] config = configJson(baseConfig, layers, ctx, spec, onRoot);
        StoredImage image;
        try {
            image = store.commit(lease, spec.reference(), config, layers);
        } catch (IOException e) {
            throw new BuildFailure("finalize", "cannot record the image " + spec.reference() + ": " + e.getMessage(), e);
        }
        if (!spec.startCmd().isEmpty()) {
            checkStartCommand(spec, image, log);
        }
        log.line("info", "finalize", "built " + spec.reference() + " (" + layers.size() + " layers, " + run + " steps run, "
                + cached + " cached) in " + (System.nanoTime() - started) / 1_000_000 + " ms");
        return new Result(image, ctx.user, ctx.workdir, run, cached);
    }

    /** Holds the base image's layers for the build; fails when GC took one since the base was found. */
    private static void hold(Lease lease, StoredImage base) throws BuildFailure {
        try {
            for (StoredImage.Layer l : base.layers()) {
                lease.hold(l);
                if (!Files.isDirectory(l.dir())) {
                    throw new BuildFailure("base", "the base image " + base.manifestDigest() + " lost layer " + l.diffId()
                            + " to the image store's garbage collection as the build started; build again");
                }
            }
        } catch (IOException e) {
            throw new BuildFailure("base", "cannot hold the base image's layers: " + e.getMessage(), e);
        }
    }

    /** Runs one RUN, COPY or WORKDIR step in a fresh sandbox; empty when it changed nothing that is kept. */
    private Optional<StoredImage.Layer> runStep(Lease lease, BuildSpec spec, BuildStep step, String n, Context ctx,
                                                List<StoredImage.Layer> layers, boolean onRoot, ImageConfig baseConfig,
                                                Map<String, Path> archives, String newWorkdir, BuildLog log)
            throws BuildFailure, InterruptedException {
        Path stage = null;
        String user;
        String cwd;
        String script;
        List<String> args;
        switch (step.kind()) {
            case "RUN" -> {
                user = step.args().size() > 1 && !step.args().get(1).isEmpty() ? step.args().get(1) : ctx.user;
                requireUser(user, n);
                cwd = ctx.cwd(user);
                script = SandboxCommand.WITH_BASH;
                args = List.of(step.args().get(0));
            }
            case "COPY" -> {
                String src = step.args().get(0);
                String root;
                try {
                    root = StepPaths.sourceRoot(src);
                } catch (IllegalArgumentException e) {
                    throw new BuildFailure(n, "COPY: " + e.getMessage());
                }
                String owner = step.owner().isEmpty() ? ctx.user : step.owner();
                if (!OWNER.matcher(owner).matches()) {
                    throw new BuildFailure(n, "COPY " + src + ": '" + owner + "' is not an owner (user or user:group)");
                }
                owner = owner.contains(":") ? owner : owner + ":" + owner;
                Path archive = archives.get(step.filesHash());
                if (archive == null) {
                    throw new BuildFailure(n, "COPY " + src + ": the files (hash " + step.filesHash() + ") were not uploaded");
                }
                stage = stage(archive, n, src);
                user = LaunchSpec.ROOT;
                cwd = "/";
                script = COPY;
                String dest = StepPaths.resolve(ctx.cwd(ctx.user), step.args().get(1));
                args = List.of(root.equals(".") ? "/.agentbox/c" : "/.agentbox/c/" + root, dest, owner, step.mode(), src);
            }
            case "WORKDIR" -> {
                user = LaunchSpec.ROOT;
                cwd = "/";
                script = WORKDIR;
                args = List.of(newWorkdir, ctx.user + ":" + ctx.user);
            }
            default -> throw new BuildFailure(n, "command type " + step.type() + " is not implemented");
        }
        try {
            List<Path> dirs = new ArrayList<>(layers.stream().map(StoredImage.Layer::dir).toList());
            if (stage != null) {
                dirs.add(stage);
            }
            SandboxImage image = new SandboxImage(spec.reference(), dirs, baseConfig, onRoot);
            return inSandbox(lease, spec, n, image, user, cwd, step.kind().equals("RUN") ? new LinkedHashMap<>(ctx.env) : Map.of(),
                    script, args, step, layers, log);
        } finally {
            if (stage != null) {
                try {
                    Trees.deleteRecursively(stage);
                } catch (IOException e) {
                    log.line("warn", n, "cannot remove the staged files " + stage + ": " + e.getMessage());
                }
            }
        }
    }

    private Optional<StoredImage.Layer> inSandbox(Lease lease, BuildSpec spec, String n, SandboxImage image, String user,
                                                  String cwd, Map<String, String> env, String script, List<String> args,
                                                  BuildStep step, List<StoredImage.Layer> layers, BuildLog log)
            throws BuildFailure, InterruptedException {
        RuntimeSandbox sandbox;
        try {
            sandbox = runtime.start(sandboxId(spec), buildTemplate(spec), Optional.of(image));
        } catch (StatusRuntimeException e) {
            throw new BuildFailure(n, "cannot start the build sandbox: " + e.getStatus().getDescription(), e);
        }
        LayerWriter.Written written;
        try {
            List<String> output = new ArrayList<>();
            int code;
            try {
                code = SandboxCommand.run(sandbox, user, cwd, env, script, args, line -> {
                    if (output.size() < 20) {
                        output.add(line);
                    }
                    log.line("info", n, line);
                }, STEP_TIMEOUT_MS);
            } catch (StatusRuntimeException e) {
                throw new BuildFailure(n, failure(step, e.getStatus().getDescription()), e);
            }
            if (code != 0) {
                throw new BuildFailure(n, step.kind().equals("RUN") ? "failed to run command '" + step.args().get(0)
                        + "': exit status " + code : failure(step, String.join("; ", output)));
            }
            try {
                sandbox.freeze(); // background processes the step left must not change the layer while it is read
            } catch (StatusRuntimeException e) {
                // a runtime without a freezer: the step's own command has ended, which is what counts
            }
            try {
                written = LayerWriter.write(runtime.writableLayer(sandbox), store.tempPath());
            } catch (IOException e) {
                throw new BuildFailure(n, "cannot read what the step changed: " + e.getMessage(), e);
            }
        } finally {
            sandbox.kill();
        }
        if (written.entries() == 0) {
            deleteQuietly(written.file());
            return Optional.empty();
        }
        try {
            StoredImage.Layer layer = store.addLayer(lease, written.file(), written.blob(), written.diffId(), diffIds(layers));
            log.line("debug", n, "layer " + written.diffId() + " (" + written.entries() + " entries, " + written.blob().size()
                    + " bytes)");
            return Optional.of(layer);
        } catch (IOException e) {
            deleteQuietly(written.file());
            throw new BuildFailure(n, "cannot store the step's layer: " + e.getMessage(), e);
        }
    }

    private static String failure(BuildStep step, String detail) {
        return switch (step.kind()) {
            case "COPY" -> "failed to copy '" + step.args().get(0) + "' to '" + step.args().get(1) + "': " + detail;
            case "WORKDIR" -> "failed to create the workdir '" + step.args().get(0) + "': " + detail;
            default -> "failed to run command '" + step.args().get(0) + "': " + detail;
        };
    }

    /**
     * Unpacks a COPY archive into a staging layer holding it under {@code /.agentbox/c}, with the
     * layer unpacker's confinement (no absolute names, no {@code ..}, no writes through symlinks).
     */
    private Path stage(Path archive, String n, String src) throws BuildFailure {
        Path stage = store.tempPath();
        try {
            Files.createDirectory(stage);
            Path agentbox = Files.createDirectory(stage.resolve(".agentbox"));
            Path c = Files.createDirectory(agentbox.resolve("c"));
            for (Path p : List.of(stage, agentbox, c)) {
                Files.setAttribute(p, "unix:mode", 0755);
                Files.setAttribute(p, "unix:uid", HostIdRange.BASE);
                Files.setAttribute(p, "unix:gid", HostIdRange.BASE);
            }
            try (InputStream in = Files.newInputStream(archive)) {
                unpacker.unpack(in, c, LowerLayers.NONE);
            }
            return stage;
        } catch (IOException | RuntimeException e) {
            deleteQuietly(stage);
            throw new BuildFailure(n, "COPY " + src + ": the uploaded archive cannot be unpacked: " + e.getMessage(), e);
        }
    }

    /** Starts the template's start command in a sandbox of the new image and waits for its ready command. */
    private void checkStartCommand(BuildSpec spec, StoredImage image, BuildLog log) throws BuildFailure, InterruptedException {
        log.line("info", "finalize", "start command: " + spec.startCmd() + (spec.readyCmd().isEmpty() ? ""
                : "; waiting for the ready command: " + spec.readyCmd()));
        RuntimeSandbox sandbox;
        SandboxImage sandboxImage = image.toSandboxImage(spec.reference());
        try {
            sandbox = runtime.start(sandboxId(spec), buildTemplate(spec), Optional.of(sandboxImage));
        } catch (StatusRuntimeException e) {
            throw new BuildFailure("finalize", "cannot start a sandbox of the built template: " + e.getStatus().getDescription(), e);
        }
        try {
            List<String> lines = new ArrayList<>();
            int code;
            try {
                code = StartCommand.run(sandbox, sandboxImage.config(), StartCommand.BUILD_LOG, StartCommand.DEFAULT_LIMIT_MS,
                        lines::add);
            } catch (StatusRuntimeException e) {
                throw new BuildFailure("finalize", "the start command could not run: " + e.getStatus().getDescription(), e);
            }
            List<String> output = new ArrayList<>();
            SandboxCommand.run(sandbox, LaunchSpec.ROOT, "/", Map.of(), "exec " + BB + " tail -n 20 \"$1\"",
                    List.of(StartCommand.BUILD_LOG), output::add, 10_000);
            for (String line : output) {
                log.line(code == 0 ? "info" : "error", "finalize", line);
            }
            if (code != 0) {
                throw new BuildFailure("finalize", String.join("; ", lines) + (output.isEmpty() ? ""
                        : " (its last output: " + String.join(" / ", output) + ")"));
            }
        } finally {
            sandbox.kill();
        }
    }

    private static byte[] configJson(ImageConfig base, List<StoredImage.Layer> layers, Context ctx, BuildSpec spec,
                                     boolean onRoot) {
        ObjectNode root = JSON.createObjectNode();
        root.put("created", Instant.now().toString());
        root.put("architecture", Platform.current().architecture());
        root.put("os", "linux");
        ObjectNode config = root.putObject("config");
        ArrayNode env = config.putArray("Env");
        base.env().forEach(env::add);
        config.put("User", ctx.user);
        if (!ctx.workdir.isEmpty()) {
            config.put("WorkingDir", ctx.workdir);
        }
        ObjectNode labels = config.putObject("Labels");
        base.labels().forEach((k, v) -> {
            if (!k.startsWith("io.agentbox.")) {
                labels.put(k, v);
            }
        });
        if (onRoot) {
            labels.put(BuiltImageLabels.BASE, BuiltImageLabels.BUILT_IN_ROOT);
        }
        if (!spec.startCmd().isEmpty()) {
            labels.put(BuiltImageLabels.START_CMD, spec.startCmd());
            labels.put(BuiltImageLabels.READY_CMD, spec.readyCmd());
        }
        labels.put(BuiltImageLabels.BUILD_ENV, BuiltImageLabels.envJson(ctx.env));
        ObjectNode rootfs = root.putObject("rootfs");
        rootfs.put("type", "layers");
        ArrayNode ids = rootfs.putArray("diff_ids");
        layers.forEach(l -> ids.add(l.diffId()));
        try {
            return JSON.writeValueAsBytes(root);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What {@code $NAME} in an ENV value can name: the user's basic variables, the image's Env, the ENV so far. */
    private static Map<String, String> expansionVars(Context ctx, ImageConfig base) {
        Map<String, String> vars = new LinkedHashMap<>();
        vars.put("HOME", ctx.home(ctx.user));
        vars.put("USER", ctx.user);
        vars.put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        for (String kv : base.env()) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                vars.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        vars.putAll(ctx.env);
        return vars;
    }

    /**
     * Sandboxes have the users {@code user} and {@code root} (the runtime's passwd); a USER or RUN
     * user of another name is refused rather than run as someone else.
     */
    private static void requireUser(String user, String step) throws BuildFailure {
        if (!LaunchSpec.USER.equals(user) && !LaunchSpec.ROOT.equals(user)) {
            throw new BuildFailure(step, "user '" + user + "': template builds run steps as 'user' or 'root' only");
        }
    }

    private static List<String> diffIds(List<StoredImage.Layer> layers) {
        return layers.stream().map(StoredImage.Layer::diffId).toList();
    }

    private static Template buildTemplate(BuildSpec spec) {
        return Template.newBuilder().setName("build-" + spec.buildId()).setNetwork("isolated").setCpuCount(spec.cpuCount())
                .setMemoryMb(spec.memoryMb()).setDiskSizeMb(spec.diskSizeMb()).build();
    }

    private static String sandboxId(BuildSpec spec) {
        String b = spec.buildId().replaceAll("[^A-Za-z0-9]", "");
        return "build-" + (b.length() > 12 ? b.substring(0, 12) : b) + "-" + SANDBOXES.incrementAndGet();
    }

    private static void deleteQuietly(Path p) {
        try {
            Trees.deleteRecursively(p);
        } catch (IOException e) {
            // a temp entry; the store removes it at its next open
        }
    }
}
