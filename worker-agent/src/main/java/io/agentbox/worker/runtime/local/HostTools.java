package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Locates the host programs the local runtime needs. Every one comes from a Debian package that
 * {@code deploy/bin/agentbox} (first start as root) and {@code deploy/bin/test-all} install.
 */
final class HostTools {
    /** OCI runtime (Debian {@code crun} 1.8.1). */
    final Path crun;
    /** Static init bound read-only as every sandbox's PID 1 (Debian {@code catatonit}). */
    final Path catatonit;
    /** Static busybox bound read-only at /.agentbox/bin/busybox: the shell of images without one. */
    final Path busybox;
    final Path nsenter;
    final Path unshare;
    final Path sh;
    final Path setsid;

    private HostTools(Path crun, Path catatonit, Path busybox, Path nsenter, Path unshare, Path sh, Path setsid) {
        this.crun = crun;
        this.catatonit = catatonit;
        this.busybox = busybox;
        this.nsenter = nsenter;
        this.unshare = unshare;
        this.sh = sh;
        this.setsid = setsid;
    }

    /**
     * @throws IllegalStateException when the worker is not root (rootless containers are future
     *     work) or a program is missing, naming the program and the package that provides it
     */
    static HostTools detect() {
        if (currentUid() != 0) {
            throw new IllegalStateException("the local sandbox runtime needs root: it runs containers with crun, "
                    + "mounts overlay file systems and maps sandbox users to host ids " + HostIdRange.BASE
                    + "+ (a rootless mode is future work); start the worker as root or use --runtime kubernetes");
        }
        Path crun = require("crun", "crun");
        Path catatonit = require("catatonit", "catatonit");
        Path busybox = require("busybox", "busybox-static");
        if (!isStatic(busybox)) {
            throw new IllegalStateException("the local sandbox runtime needs a statically linked busybox at " + busybox
                    + " (it runs inside images without a shell): install the 'busybox-static' package");
        }
        return new HostTools(crun, catatonit, busybox, require("nsenter", "util-linux"),
                require("unshare", "util-linux"), require("sh", "dash"), require("setsid", "util-linux"));
    }

    static int currentUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalStateException("the local runtime needs Linux (cannot read /proc/self): " + e.getMessage(), e);
        }
    }

    /** An ELF file without a PT_INTERP program header (no dynamic loader) is static. */
    private static boolean isStatic(Path elf) {
        try (var in = Files.newInputStream(elf)) {
            String head = new String(in.readNBytes(4096), StandardCharsets.ISO_8859_1);
            return head.startsWith("\u007fELF") && !head.contains("ld-linux");
        } catch (IOException e) {
            return false;
        }
    }

    private static Path require(String program, String pkg) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String dir : (path + ":/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("the local sandbox runtime needs '" + program + "' on PATH (install the '"
                + pkg + "' package)");
    }
}
