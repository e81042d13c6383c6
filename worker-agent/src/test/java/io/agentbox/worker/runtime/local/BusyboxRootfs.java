package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A one-layer image for tests: Debian's static busybox with a few applet links, /etc/passwd with
 * root and svc (999), a file owned by svc, no /bin/bash. Owners are stored shifted into
 * {@link HostIdRange} as the image store does.
 */
final class BusyboxRootfs {
    private BusyboxRootfs() {}

    static Path build(Path dir) throws IOException {
        Path busybox = Path.of("/usr/bin/busybox");
        if (!Files.isExecutable(busybox)) {
            throw new AssertionError("tests need a static /usr/bin/busybox: install the 'busybox-static' package");
        }
        Files.createDirectories(dir.resolve("bin"));
        Files.copy(busybox, dir.resolve("bin/busybox"));
        for (String applet : new String[] {"sh", "id", "cat", "ls", "su", "stat", "touch", "pwd", "echo", "cut", "env"}) {
            Files.createSymbolicLink(dir.resolve("bin").resolve(applet), Path.of("busybox"));
        }
        Files.createDirectories(dir.resolve("etc"));
        Files.writeString(dir.resolve("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nsvc:x:999:999:svc:/:/bin/sh\n");
        Files.writeString(dir.resolve("etc/group"), "root:x:0:\nsvc:x:999:\n");
        // no /root: the engine layer adds root's home when an image lacks it
        Files.createDirectories(dir.resolve("srv"));
        Files.createDirectories(dir.resolve("tmp"));
        Files.createDirectories(dir.resolve("data"));
        Files.writeString(dir.resolve("data/svc-owned"), "svc\n");
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.toList()) {
                Files.setAttribute(p, "unix:uid", HostIdRange.BASE, LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", HostIdRange.BASE, LinkOption.NOFOLLOW_LINKS);
            }
        }
        Files.setAttribute(dir.resolve("tmp"), "unix:mode", 01777);
        Files.setAttribute(dir.resolve("data/svc-owned"), "unix:uid", HostIdRange.toHost(999), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(dir.resolve("data/svc-owned"), "unix:gid", HostIdRange.toHost(999), LinkOption.NOFOLLOW_LINKS);
        return dir;
    }
}
