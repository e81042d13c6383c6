package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Optional;

/**
 * Read access to what a sandbox's lower layers show at a path, for the engine's own files
 * (passwd, directory attributes), without mounting: the top-most layer holding the path wins, a
 * whiteout (character device 0/0, or a file with {@code user.overlay.whiteout}) hides it.
 * Opaque directories are not followed further down (rare for the few paths read here).
 *
 * @param topFirst layer directories, top layer first
 * @param ownerShift added to owner ids read from the layers to get host ids (the host root is
 *     stored unshifted: {@link HostIdRange#BASE}; image layers: 0)
 * @param below what lies under these layers with its own shift (built layers on the host root),
 *     or null
 */
record Lowers(List<Path> topFirst, int ownerShift, Lowers below) {
    Lowers {
        topFirst = List.copyOf(topFirst);
    }

    Lowers(List<Path> topFirst, int ownerShift) {
        this(topFirst, ownerShift, null);
    }

    /** The layer entry at {@code path} with the owner shift of its layer. */
    private record Found(Path path, int shift) {}

    /**
     * The layer entry that shows at {@code path} (relative, e.g. "etc/passwd"), if any. Never a
     * symlink nor anything reached through one: a layer's symlinks point into the sandbox's view,
     * and following them here, on the host, would read host files (an image with
     * {@code etc/passwd -> /etc/shadow} would hand the host's file to the sandbox); such a path
     * counts as absent.
     */
    Optional<Path> find(String path) {
        return locate(path).map(Found::path);
    }

    private Optional<Found> locate(String path) {
        for (Path layer : topFirst) {
            Path p = layer;
            boolean inLayer = true;
            String[] parts = path.split("/");
            for (int i = 0; i < parts.length && inLayer; i++) {
                p = p.resolve(parts[i]);
                PosixFileAttributes a;
                try {
                    a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                } catch (IOException e) {
                    inLayer = false; // not in this layer
                    break;
                }
                if (a.isSymbolicLink() || a.isOther() || isXattrWhiteout(p, a)) {
                    return Optional.empty();
                }
                if (i < parts.length - 1 && !a.isDirectory()) {
                    return Optional.empty();
                }
            }
            if (inLayer) {
                return Optional.of(new Found(p, ownerShift));
            }
        }
        return below == null ? Optional.empty() : below.locate(path);
    }

    boolean exists(String path) {
        return find(path).isPresent();
    }

    /** Host uid, gid and mode bits (with type bits cleared) of the directory shown at {@code path}, or the fallback. */
    int[] dirOwnerAndMode(String path, int fallbackMode) {
        Optional<Found> found = locate(path);
        if (found.isPresent()) {
            Path p = found.get().path();
            int shift = found.get().shift();
            try {
                int uid = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
                int gid = (Integer) Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS);
                int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    return new int[] {uid + shift, gid + shift, mode & 07777};
                }
            } catch (IOException | RuntimeException e) {
                // fall back
            }
        }
        int root = HostIdRange.BASE;
        return new int[] {root, root, fallbackMode};
    }

    private static boolean isXattrWhiteout(Path p, PosixFileAttributes a) {
        if (!a.isRegularFile() || a.size() != 0) {
            return false;
        }
        try {
            var view = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS);
            return view != null && view.list().contains("overlay.whiteout");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
