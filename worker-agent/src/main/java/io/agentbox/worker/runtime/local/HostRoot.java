package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lower layers of templates without an image: the {@link MaskLayer} over the host's root
 * file system, seen through an idmapped bind mount that shows host ids 0..65535 as
 * {@link HostIdRange} ids, so root inside a sandbox owns the host's root-owned files and can
 * write them (overlayfs copies them up into the sandbox's own layer; the host's files never
 * change). Both live in the runtime's mount namespace under {@code run/}.
 *
 * <p>When the idmapped mount cannot be made (kernel before 5.12, a file system without idmap
 * support) the host root is bound unshifted: sandboxes then see host-owned files as
 * {@code nobody} and root inside cannot change them (logged as a warning).
 */
final class HostRoot {
    private static final Logger log = LoggerFactory.getLogger(HostRoot.class);

    private final Path mask;
    private final Path root;
    private final boolean idmapped;
    private final Holder holder;
    private final Path view;
    /** Guarded by this: whether {@link #view} is mounted. */
    private boolean viewMounted;

    private HostRoot(Path mask, Path root, boolean idmapped, Holder holder, Path view) {
        this.mask = mask;
        this.root = root;
        this.idmapped = idmapped;
        this.holder = holder;
        this.view = view;
    }

    static HostRoot prepare(HostTools tools, Holder holder, Path runDir, List<Path> hidden) throws IOException {
        Path root = runDir.resolve("hostroot");
        Path mask = runDir.resolve("mask");
        Files.createDirectory(holder.view(root));
        String failure = idmap(tools, holder, root);
        if (failure != null) {
            log.warn("cannot make an idmapped mount of the host root ({}); sandboxes of templates without an image "
                    + "get the host root unshifted: host files show as nobody and root inside cannot change them", failure);
            holder.sh("binding the host root", "mount --bind / \"$1\" && mount -o remount,bind,ro \"$1\"",
                    List.of(root.toString()), 10_000);
        }
        List<String> whiteouts = MaskLayer.build(holder.view(mask), mask, hidden);
        if (!whiteouts.isEmpty()) {
            List<String> args = new ArrayList<>();
            args.add(Integer.toString(HostIdRange.BASE));
            args.addAll(whiteouts);
            holder.sh("writing the mask layer", "o=$1; shift; for f; do mknod \"$f\" c 0 0 && chown \"$o:$o\" \"$f\"; done",
                    args, 10_000);
        }
        return new HostRoot(mask, root, failure == null, holder, runDir.resolve("rootview"));
    }

    /** Overlay lowerdirs, top first. */
    List<String> lowerdirs() {
        return List.of(mask.toString(), root.toString());
    }

    /**
     * The mask over the host root as one lower directory: a read-only overlay of the two, mounted
     * once per runtime. Layers stored on the host's root file system (a template built on
     * {@code base}) cannot sit in one overlay beside the host root itself: overlayfs refuses lower
     * layers of which one is an ancestor of another ("overlapping lowerdir path", ELOOP); the
     * nested overlay is a file system of its own, so the stack passes (overlayfs allows a stacking
     * depth of two, which the sandbox's overlay on top of this one reaches).
     */
    synchronized List<String> stackedLowerdir() {
        if (!viewMounted) {
            try {
                Files.createDirectories(holder.view(view));
            } catch (IOException e) {
                throw new IllegalStateException("cannot create " + view + ": " + e.getMessage(), e);
            }
            holder.sh("mounting the host root view", "mount -t overlay -o \"userxattr,lowerdir=$1:$2\" agentbox-rootview \"$3\"",
                    List.of(mask.toString(), root.toString(), view.toString()), 10_000);
            viewMounted = true;
        }
        return List.of(view.toString());
    }

    /** The host root as the engine layer reads it (owners shifted into the sandbox range). */
    Lowers lowers() {
        return new Lowers(List.of(Path.of("/")), HostIdRange.BASE);
    }

    boolean idmapped() {
        return idmapped;
    }

    /** @return null on success, else why it failed */
    private static String idmap(HostTools tools, Holder holder, Path target) {
        Process userns = null;
        try {
            // a user namespace that maps 0..65535 to the sandbox range: the mount's id mapping
            ProcessBuilder pb = new ProcessBuilder(tools.unshare.toString(), "--user", "cat")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
            pb.environment().clear();
            userns = pb.start();
            String map = "0 " + HostIdRange.BASE + " " + HostIdRange.SIZE + "\n";
            Path proc = Path.of("/proc/" + userns.pid());
            for (int i = 0; i < 200 && Files.readSymbolicLink(proc.resolve("ns/user")).equals(
                    Files.readSymbolicLink(Path.of("/proc/self/ns/user"))); i++) {
                Thread.sleep(5); // unshare has not unshared yet
            }
            Files.writeString(proc.resolve("uid_map"), map, StandardCharsets.US_ASCII);
            Files.writeString(proc.resolve("gid_map"), map, StandardCharsets.US_ASCII);
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            List<String> argv = holder.enter(List.of(java.toString(), "-Xmx32m", "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), IdmapMount.class.getName(),
                    proc.resolve("ns/user").toString(), "/", target.toString()));
            ProcessBuilder helper = new ProcessBuilder(argv).redirectErrorStream(true);
            Process p = helper.start();
            byte[] out = p.getInputStream().readNBytes(4000);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "the idmap helper timed out";
            }
            return p.exitValue() == 0 ? null : new String(out, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        } finally {
            if (userns != null) {
                userns.destroyForcibly();
            }
        }
    }
}
