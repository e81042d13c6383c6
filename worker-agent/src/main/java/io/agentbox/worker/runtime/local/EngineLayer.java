package io.agentbox.worker.runtime.local;

import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A sandbox's engine-owned lower layer, the top-most lower of its overlay: mount points the
 * runtime binds over (/proc, /sys, /dev, /.agentbox/init, /.agentbox/run, /.agentbox/bin/busybox), the sandbox's
 * /etc/hostname, /etc/hosts and /etc/resolv.conf, /etc/passwd and /etc/group with {@code user}
 * added, /home/user owned by it, and /root and /tmp when the image lacks them. Keeping these out of the writable layer keeps the writable
 * layer to what the sandbox itself changed. Owners are host ids (sandbox id + {@link HostIdRange#BASE}).
 */
final class EngineLayer {
    private static final int ROOT = HostIdRange.BASE;

    private EngineLayer() {}

    /**
     * Writes the layer into {@code dir} (created; a path reachable from the worker).
     *
     * @param lowers what the layers below show, for passwd, group and directory attributes
     * @param resolvConf content of /etc/resolv.conf
     */
    static void write(Path dir, String hostname, Lowers lowers, String resolvConf) throws IOException {
        dir(dir, ROOT, ROOT, 0755);
        for (String mp : new String[] {"proc", "sys", "dev"}) {
            dir(dir.resolve(mp), ROOT, ROOT, 0555);
        }
        Path agentbox = dir(dir.resolve(".agentbox"), ROOT, ROOT, 0755);
        file(agentbox.resolve("init"), "", 0755, ROOT);
        dir(agentbox.resolve("run"), ROOT, ROOT, 0700);
        dir(agentbox.resolve("bin"), ROOT, ROOT, 0755);
        file(agentbox.resolve("bin/busybox"), "", 0755, ROOT);
        int[] etc = lowers.dirOwnerAndMode("etc", 0755);
        Path etcDir = dir(dir.resolve("etc"), etc[0], etc[1], etc[2]);
        file(etcDir.resolve("hostname"), hostname + "\n", 0644, ROOT);
        file(etcDir.resolve("hosts"), "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t"
                + hostname + "\n", 0644, ROOT);
        file(etcDir.resolve("resolv.conf"), resolvConf, 0644, ROOT);
        String shell = lowers.exists("bin/bash") || lowers.exists("usr/bin/bash") ? "/bin/bash" : "/bin/sh";
        file(etcDir.resolve("passwd"), EtcUsers.passwd(read(lowers, "etc/passwd"), shell), 0644, ROOT);
        file(etcDir.resolve("group"), EtcUsers.group(read(lowers, "etc/group")), 0644, ROOT);
        int[] home = lowers.dirOwnerAndMode("home", 0755);
        Path homeDir = dir(dir.resolve("home"), home[0], home[1], home[2]);
        int user = HostIdRange.toHost(EtcUsers.UID);
        dir(homeDir.resolve("user"), user, user, 0755);
        if (!lowers.exists("root")) { // root's home: the default cwd and ~ of commands run as root
            dir(dir.resolve("root"), ROOT, ROOT, 0700);
        }
        if (!lowers.exists("tmp")) {
            dir(dir.resolve("tmp"), ROOT, ROOT, 01777);
        }
    }

    private static String read(Lowers lowers, String path) {
        Optional<Path> p = lowers.find(path);
        if (p.isEmpty()) {
            return null;
        }
        try {
            if (Files.size(p.get()) > 4 * 1024 * 1024) {
                return null; // not a passwd file anyone writes by hand; start from our entries
            }
            return Files.readString(p.get(), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static Path dir(Path p, int uid, int gid, int mode) throws IOException {
        Files.createDirectory(p);
        own(p, uid, gid, mode);
        return p;
    }

    static void file(Path p, String content, int mode, int owner) throws IOException {
        Files.writeString(p, content, StandardCharsets.UTF_8);
        own(p, owner, owner, mode);
    }

    static void own(Path p, int uid, int gid, int mode) throws IOException {
        Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
    }
}
