package io.agentbox.worker.image.unpack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.worker.image.LayerTar;
import io.agentbox.worker.image.OverlayMount;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The unpacker against real overlayfs mounts (as root) and hostile tars: what a sandbox would see
 * through the merged view, and that nothing escapes the layer directory.
 */
class LayerUnpackerTest {
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    @TempDir
    Path tmp;
    Path canary;

    @BeforeEach
    void canary() throws IOException {
        // outside the layer directories: hostile layers aim here
        canary = Files.createTempDirectory(Path.of("/tmp"), "canary-dir");
    }

    @AfterEach
    void removeCanary() throws IOException {
        Trees.deleteRecursively(canary);
    }

    /** Bottom layer: the things later layers delete, hide, link to. gzip. */
    static byte[] layer1() {
        return new LayerTar()
                .dir("etc").file("etc/keep", "keep").file("etc/removed", "removed")
                .dir("dd").file("dd/a", "a").file("dd/b", "b")
                .dir("sub").dir("sub/dir").file("sub/dir/deleteme", "x").file("sub/dir/stay", "stay")
                .dir("hl").file("hl/one", "shared", 0640, 7, 8)
                .dir("bin").file("bin/suid", "#!/bin/sh\n", 04755)
                .dir("home").dir("home/app", 0750, 999, 999).file("home/app/data", "mine", 0600, 999, 999)
                .dir("run").fifo("run/fifo", 0620)
                .dir("dev").charDevice("dev/null", 1, 3)
                .file("gone", "bye")
                .file("note", "n".getBytes(StandardCharsets.UTF_8), 0644, 0, 0, Map.of(
                        "SCHILY.xattr.user.note", "hello",
                        "SCHILY.xattr.security.capability", "\u0001\u0000\u0000\u0002",
                        "SCHILY.xattr.user.overlay.opaque", "y"))
                .symlink("etc/link", "keep")
                .gzip();
    }

    /** Whiteouts, an opaque directory, hardlinks in the layer and into layer 1. zstd. */
    static byte[] layer2() {
        return new LayerTar()
                .dir("etc").whiteout("etc/removed")
                .dir("dd").opaque("dd").file("dd/c", "c")
                .whiteout("sub/dir/deleteme")
                .dir("x").file("x/h1", "linked", 0644).hardlink("x/h2", "x/h1")
                .hardlink("hl/two", "hl/one")
                .zstd();
    }

    /** A whiteout at the root and a new file; plain tar. */
    static byte[] layer3() {
        return new LayerTar().whiteout("gone").file("top", "top").tar();
    }

    private Path unpack(LayerUnpacker u, byte[] blob, String name, List<Path> lowersTopFirst) throws IOException {
        Path dir = Files.createDirectory(tmp.resolve(name));
        u.unpack(new ByteArrayInputStream(blob), dir, () -> lowersTopFirst);
        return dir;
    }

    @ParameterizedTest
    @EnumSource(WhiteoutForm.class)
    void mergedViewThroughARealOverlayMount(WhiteoutForm form) throws IOException {
        LayerUnpacker u = new LayerUnpacker(UnpackLimits.DEFAULT, form);
        Path l1 = unpack(u, layer1(), "l1", List.of());
        Path l2 = unpack(u, layer2(), "l2", List.of(l1));
        Path l3 = unpack(u, layer3(), "l3", List.of(l2, l1));
        Path merged = Files.createDirectory(tmp.resolve("merged"));
        try (OverlayMount m = OverlayMount.mount(List.of(l3, l2, l1), merged)) {
            Path r = m.root();
            assertThat(Files.readString(r.resolve("etc/keep"))).isEqualTo("keep");
            assertThat(r.resolve("etc/removed")).doesNotExist();
            assertThat(list(r.resolve("etc"))).containsExactlyInAnyOrder("keep", "link");
            assertThat(list(r.resolve("dd"))).containsExactly("c");
            assertThat(list(r.resolve("sub/dir"))).containsExactly("stay");
            assertThat(r.resolve("gone")).doesNotExist();
            assertThat(Files.readString(r.resolve("top"))).isEqualTo("top");

            assertThat(ino(r.resolve("x/h2"))).isEqualTo(ino(r.resolve("x/h1")));
            assertThat(Files.readString(r.resolve("x/h2"))).isEqualTo("linked");
            // hardlink into the lower layer: copied up into layer 2, linked there
            assertThat(ino(r.resolve("hl/two"))).isEqualTo(ino(r.resolve("hl/one")));
            assertThat(Files.readString(r.resolve("hl/two"))).isEqualTo("shared");
            assertThat(attr(r.resolve("hl/two"), "uid")).isEqualTo(1_000_007);
            assertThat(attr(r.resolve("hl/two"), "mode") & 07777).isEqualTo(0640);

            assertThat(attr(r.resolve("home/app/data"), "uid")).isEqualTo(1_000_999);
            assertThat(attr(r.resolve("home/app/data"), "gid")).isEqualTo(1_000_999);
            assertThat(attr(r.resolve("home/app"), "uid")).isEqualTo(1_000_999);
            assertThat(attr(r.resolve("home/app"), "mode") & 07777).isEqualTo(0750);
            assertThat(attr(r.resolve("bin/suid"), "mode") & 07777).isEqualTo(04755);
            assertThat(attr(r.resolve("bin/suid"), "uid")).isEqualTo(1_000_000);
            assertThat(attr(r.resolve("run/fifo"), "mode") & 0170000).isEqualTo(0010000);
            assertThat(r.resolve("dev/null")).doesNotExist();
            assertThat(Files.readSymbolicLink(r.resolve("etc/link")).toString()).isEqualTo("keep");
            assertThat(xattr(r.resolve("note"), "note")).isEqualTo("hello");
            assertThat(Files.getLastModifiedTime(r.resolve("dd")).toInstant()).isEqualTo(LayerTar.MTIME);
            assertThat(Files.getLastModifiedTime(r.resolve("etc/keep")).toInstant()).isEqualTo(LayerTar.MTIME);
        }
        assertThat(Files.isDirectory(merged)).isTrue();
    }

    @Test
    void reportsWhatItSkipsAndComputesTheDiffIdOfEveryCompression() throws IOException {
        LayerUnpacker u = new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.forThisKernel());
        byte[] tar = new LayerTar().dir("d").file("d/f", "data").charDevice("d/tty", 5, 0)
                .file("d/cap", "c".getBytes(StandardCharsets.UTF_8), 0755, 0, 0,
                        Map.of("SCHILY.xattr.security.capability", "x", "SCHILY.xattr.trusted.overlay.opaque", "y"))
                .tar();
        int i = 0;
        for (byte[] blob : List.of(tar, LayerTar.gzip(tar), LayerTar.zstd(tar))) {
            Path dir = Files.createDirectory(tmp.resolve("c" + i++));
            UnpackResult r = u.unpack(new ByteArrayInputStream(blob), dir, LowerLayers.NONE);
            assertThat(r.diffId()).isEqualTo(LayerTar.sha256(tar));
            assertThat(r.tarBytes()).isEqualTo(tar.length);
            assertThat(r.entries()).isEqualTo(4);
            assertThat(Files.readString(dir.resolve("d/f"))).isEqualTo("data");
            assertThat(r.skipped()).anySatisfy(s -> assertThat(s).contains("d/tty").contains("device"))
                    .anySatisfy(s -> assertThat(s).contains("security.capability"))
                    .anySatisfy(s -> assertThat(s).contains("trusted.overlay.opaque").contains("dropped"));
            assertThat(FileOps.userXattrs(dir.resolve("d/cap"))).isEmpty();
        }
    }

    @Test
    void whiteoutAndFileOfTheSameNameInOneLayerKeepTheFile() throws IOException {
        LayerUnpacker u = new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.XATTR_FILE);
        Path l1 = unpack(u, new LayerTar().file("a", "old").file("b", "old").tar(), "l1", List.of());
        Path l2 = unpack(u, new LayerTar().file("a", "new").whiteout("a").whiteout("b").file("b", "newer").tar(), "l2", List.of(l1));
        Path merged = Files.createDirectory(tmp.resolve("merged"));
        try (OverlayMount m = OverlayMount.mount(List.of(l2, l1), merged)) {
            assertThat(Files.readString(m.root().resolve("a"))).isEqualTo("new");
            assertThat(Files.readString(m.root().resolve("b"))).isEqualTo("newer");
        }
    }

    /** A hostile layer: fails naming {@code entry}, leaves the layer dir empty and the canary untouched. */
    private void assertRefused(byte[] blob, String entry, String problem) throws IOException {
        LayerUnpacker u = new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.forThisKernel());
        Path dir = Files.createDirectory(tmp.resolve("hostile-" + System.nanoTime()));
        assertThatThrownBy(() -> u.unpack(new ByteArrayInputStream(blob), dir, LowerLayers.NONE))
                .isInstanceOf(BadLayerException.class)
                .hasMessageContaining("'" + entry + "'")
                .hasMessageContaining(problem)
                .satisfies(e -> assertThat(((BadLayerException) e).entry()).isEqualTo(entry));
        assertThat(list(dir)).isEmpty();
        assertThat(list(canary)).isEmpty();
        assertThat(tmp.resolve("x")).doesNotExist();
        assertThat(Path.of("/etc/x")).doesNotExist();
    }

    @Test
    void refusesHostileLayersNamingTheEntry() throws IOException {
        byte[] data = "pwned".getBytes(StandardCharsets.UTF_8);
        assertRefused(new LayerTar().file("ok", "fine").raw("../x", TarConstants.LF_NORMAL, null, data).tar(), "../x", "'..'");
        assertRefused(new LayerTar().raw("/etc/x", TarConstants.LF_NORMAL, null, data).tar(), "/etc/x", "absolute");
        assertRefused(new LayerTar().raw("a/../../x", TarConstants.LF_NORMAL, null, data).tar(), "a/../../x", "'..'");
        assertRefused(new LayerTar().symlink("link", canary.toString())
                .raw("link/pwned", TarConstants.LF_NORMAL, null, data).tar(), "link/pwned", "symlink");
        assertRefused(new LayerTar().symlink("up", "../../../..")
                .raw("up/tmp/pwned/", TarConstants.LF_DIR, null, null).tar(), "up/tmp/pwned/", "symlink");
        assertRefused(new LayerTar().hardlink("passwd", "/etc/passwd").tar(), "passwd", "absolute");
        assertRefused(new LayerTar().hardlink("passwd", "../../../../etc/passwd").tar(), "passwd", "'..'");
        // a hardlink through a symlink inside the layer must not reach the host either
        assertRefused(new LayerTar().symlink("host", "/").hardlink("passwd", "host/etc/passwd").tar(), "passwd",
                "neither in this layer nor below");
        assertRefused(new LayerTar().file("big-uid", "x", 0644, 70_000, 0).tar(), "big-uid", "outside the sandbox id range");
        assertRefused(new LayerTar().dir("d").file("d/f", "x").symlink("d", canary.toString())
                .raw("d/again", TarConstants.LF_NORMAL, null, data).tar(), "d/again", "symlink");
    }

    @Test
    void limitsNameTheirLimit() throws IOException {
        byte[] tar = new LayerTar().file("a", "aaaa").file("b", "bbbb").file("c/" + "n".repeat(60), "c").tar();
        assertThatThrownBy(() -> new LayerUnpacker(new UnpackLimits(2, 1 << 20, 4096), WhiteoutForm.XATTR_FILE)
                .unpack(new ByteArrayInputStream(tar), Files.createDirectory(tmp.resolve("e")), LowerLayers.NONE))
                .hasMessageContaining("limit of 2 entries");
        assertThatThrownBy(() -> new LayerUnpacker(new UnpackLimits(10, 1024, 4096), WhiteoutForm.XATTR_FILE)
                .unpack(new ByteArrayInputStream(tar), Files.createDirectory(tmp.resolve("b")), LowerLayers.NONE))
                .hasMessageContaining("limit of 1024 bytes");
        assertThatThrownBy(() -> new LayerUnpacker(new UnpackLimits(10, 1 << 20, 40), WhiteoutForm.XATTR_FILE)
                .unpack(new ByteArrayInputStream(tar), Files.createDirectory(tmp.resolve("p")), LowerLayers.NONE))
                .hasMessageContaining("'c/nnnn").hasMessageContaining("limit of 40 characters");
    }

    @Test
    void malformedTarFailsClearly() throws IOException {
        byte[] noise = new byte[20_000];
        new java.util.Random(1).nextBytes(noise);
        byte[] tar = new LayerTar().file("a", noise, 0644, 0, 0, Map.of()).tar();
        byte[] cut = java.util.Arrays.copyOf(LayerTar.gzip(tar), 5_000);
        Path dir = Files.createDirectory(tmp.resolve("m"));
        assertThatThrownBy(() -> new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.XATTR_FILE)
                .unpack(new ByteArrayInputStream(cut), dir, LowerLayers.NONE))
                .isInstanceOf(BadLayerException.class).hasMessageContaining("entry 'a'").hasMessageContaining("truncated");
        assertThat(list(dir)).isEmpty();
    }

    @Test
    void inputShorterThanATarHeaderIsNoArchiveButTwoZeroBlocksAreAnEmptyOne() throws IOException {
        byte[] noise = new byte[300];
        new java.util.Random(2).nextBytes(noise);
        noise[0] = 'x'; // not gzip's magic: read as a plain tar
        for (byte[] input : List.of(noise, LayerTar.gzip(noise))) {
            Path dir = Files.createTempDirectory(tmp, "short");
            assertThatThrownBy(() -> new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.XATTR_FILE)
                    .unpack(new ByteArrayInputStream(input), dir, LowerLayers.NONE))
                    .isInstanceOf(BadLayerException.class).hasMessageContaining("not a tar archive: 300 bytes");
        }
        Path empty = Files.createDirectory(tmp.resolve("empty"));
        assertThat(new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.XATTR_FILE)
                .unpack(new ByteArrayInputStream(new byte[1024]), empty, LowerLayers.NONE).entries()).isZero();
    }

    static List<String> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<String> names = new ArrayList<>();
            s.forEach(p -> names.add(p.getFileName().toString()));
            return names;
        }
    }

    static long ino(Path p) throws IOException {
        return (Long) Files.getAttribute(p, "unix:ino", NOFOLLOW);
    }

    static int attr(Path p, String name) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:" + name, NOFOLLOW);
    }

    static String xattr(Path p, String name) throws IOException {
        UserDefinedFileAttributeView v = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class);
        ByteBuffer b = ByteBuffer.allocate(v.size(name));
        v.read(name, b);
        return new String(b.array(), StandardCharsets.UTF_8);
    }
}
