package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Locates the host programs the local runtime needs and the identity the worker runs as. */
final class HostTools {
    final Path bwrap;
    final Path nsenter;
    final Path kill;
    /** Also used inside sandboxes, which see the host's /usr read-only. */
    final Path setsid;
    /** null when the worker is not root (then sandboxes run under the worker's own uid). */
    final Path setpriv;
    final int workerUid;

    private HostTools(Path bwrap, Path nsenter, Path kill, Path setsid, Path setpriv, int workerUid) {
        this.bwrap = bwrap;
        this.nsenter = nsenter;
        this.kill = kill;
        this.setsid = setsid;
        this.setpriv = setpriv;
        this.workerUid = workerUid;
    }

    /** @throws IllegalStateException naming the missing program and the package that provides it */
    static HostTools detect() {
        int uid = currentUid();
        Path bwrap = require("bwrap", "bubblewrap");
        Path nsenter = require("nsenter", "util-linux");
        Path kill = require("kill", "procps");
        Path setpriv = uid == 0 ? require("setpriv", "util-linux") : null;
        Path setsid = require("setsid", "util-linux");
        require(Terminal.SCRIPT, "bsdutils"); // pty sessions (runs inside the sandbox from the host's /usr)
        return new HostTools(bwrap, nsenter, kill, setsid, setpriv, uid);
    }

    static int currentUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalStateException("the local runtime needs Linux (cannot read /proc/self): " + e.getMessage(), e);
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
