package io.agentbox.worker.runtime.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the engine reads from an image's layers (its /etc/passwd and /etc/group, to add the
 * sandbox user) is never reached through a symlink: a hostile image whose {@code etc/passwd}
 * points at a host file, or whose {@code etc} is a link to the host's /etc, must not hand the
 * host's file to the sandbox.
 */
class LowersTest {
    @TempDir
    Path dir;

    @Test
    void symlinksInLayersAreNeverFollowedOnTheHost() throws Exception {
        Path secret = Files.writeString(dir.resolve("host-secret"), "HOSTSECRET");
        Path top = Files.createDirectories(dir.resolve("top/etc"));
        Files.createSymbolicLink(top.resolve("passwd"), secret);
        Path linkedEtc = Files.createDirectories(dir.resolve("linked"));
        Files.createSymbolicLink(linkedEtc.resolve("etc"), secret.getParent());
        Path plain = Files.createDirectories(dir.resolve("plain/etc"));
        Files.writeString(plain.resolve("group"), "root:x:0:\n");

        Lowers imageWithLink = new Lowers(List.of(dir.resolve("top"), dir.resolve("plain")), 0);
        assertThat(imageWithLink.find("etc/passwd")).isEmpty();
        assertThat(imageWithLink.find("etc/group")).contains(plain.resolve("group"));

        Lowers imageWithLinkedDir = new Lowers(List.of(linkedEtc), 0);
        assertThat(imageWithLinkedDir.find("etc/host-secret")).isEmpty();
        assertThat(imageWithLinkedDir.exists("etc")).isFalse();
    }
}
