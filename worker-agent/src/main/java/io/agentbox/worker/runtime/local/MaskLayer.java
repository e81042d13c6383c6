package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine-owned layer above the host root of templates without an image: what a sandbox must
 * not see of the host. Each hidden directory is an empty opaque directory
 * ({@code user.overlay.opaque=y}, read because the overlay is mounted with {@code userxattr});
 * /etc/shadow and /etc/gshadow (and their backups) are whited out (character devices 0/0, made by
 * {@code mknod} in the runtime's namespace). Directories on the way keep the host's owner
 * (shifted into {@link HostIdRange}) and mode, since the top-most layer's directory decides them.
 */
final class MaskLayer {
    /** Host directories every sandbox of the host root sees empty. */
    static final List<String> ALWAYS_HIDDEN = List.of("/home", "/root", "/work", "/srv", "/mnt", "/media", "/tmp",
            "/var/tmp", "/run", "/var/lib/agentbox", "/var/log", "/var/mail", "/var/spool", "/var/backups");
    /** Host files removed from every sandbox's view. */
    static final List<String> WHITED_OUT = List.of("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-",
            "/etc/sudoers", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key");

    private MaskLayer() {}

    /**
     * Builds the layer in {@code dir} (reachable from the worker; {@code insideDir} is the same
     * directory as the namespace sees it).
     *
     * @param hidden absolute host directories to show empty
     * @return the whiteouts to create, as namespace paths (for {@code mknod NAME c 0 0})
     */
    static List<String> build(Path dir, Path insideDir, List<Path> hidden) throws IOException {
        Files.createDirectories(dir);
        copyAttrs(Path.of("/"), dir);
        List<Path> roots = new ArrayList<>();
        for (Path h : hidden) {
            Path abs = h.toAbsolutePath().normalize();
            if (abs.getNameCount() == 0 || roots.stream().anyMatch(abs::startsWith)) {
                continue;
            }
            roots.removeIf(r -> r.startsWith(abs));
            roots.add(abs);
        }
        for (Path h : roots) {
            Path target = parents(dir, h);
            Files.createDirectories(target);
            Path host = h;
            if (Files.isDirectory(host, LinkOption.NOFOLLOW_LINKS)) {
                copyAttrs(host, target);
            } else {
                EngineLayer.own(target, HostIdRange.BASE, HostIdRange.BASE, 0755);
            }
            if (h.equals(Path.of("/tmp")) || h.equals(Path.of("/var/tmp"))) {
                EngineLayer.own(target, HostIdRange.BASE, HostIdRange.BASE, 01777);
            }
            Files.getFileAttributeView(target, UserDefinedFileAttributeView.class)
                    .write("overlay.opaque", ByteBuffer.wrap("y".getBytes(StandardCharsets.US_ASCII)));
        }
        List<String> whiteouts = new ArrayList<>();
        for (String f : WHITED_OUT) {
            Path host = Path.of(f);
            if (Files.exists(host, LinkOption.NOFOLLOW_LINKS) && roots.stream().noneMatch(host::startsWith)) {
                parents(dir, host);
                whiteouts.add(insideDir.resolve(f.substring(1)).toString());
            }
        }
        return whiteouts;
    }

    /** Creates {@code dir}'s copies of {@code hostPath}'s parents with the host's attributes; returns the copy of hostPath. */
    private static Path parents(Path dir, Path hostPath) throws IOException {
        Path cur = dir;
        Path host = Path.of("/");
        for (int i = 0; i < hostPath.getNameCount() - 1; i++) {
            host = host.resolve(hostPath.getName(i));
            cur = cur.resolve(hostPath.getName(i).toString());
            if (!Files.isDirectory(cur, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(cur);
                copyAttrs(host, cur);
            }
        }
        return cur.resolve(hostPath.getFileName().toString());
    }

    private static void copyAttrs(Path host, Path copy) throws IOException {
        int uid = (Integer) Files.getAttribute(host, "unix:uid");
        int gid = (Integer) Files.getAttribute(host, "unix:gid");
        int mode = (Integer) Files.getAttribute(host, "unix:mode") & 07777;
        EngineLayer.own(copy, shift(uid), shift(gid), mode);
    }

    private static int shift(int hostId) {
        return hostId < HostIdRange.SIZE ? HostIdRange.toHost(hostId) : HostIdRange.toHost(65534);
    }
}
