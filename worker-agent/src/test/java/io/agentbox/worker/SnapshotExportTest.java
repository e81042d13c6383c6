package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.pull.HubImageSource;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot's OCI form (image.proto ExportSnapshot; docs/snapshots-and-reset.md, "Across
 * clusters") on real crun sandboxes: the export is read back over {@code ReadImageBlob}, as the hub
 * reads it, and pulled into a second image store, as another cluster's worker pulls it from the hub;
 * the layer that second store unpacks equals the snapshot's layer entry by entry (whiteouts and
 * opaque directories in the store's form, owners, modes, hardlinks, symlinks, FIFOs, sparse files,
 * long and non-ASCII names, contents).
 */
class SnapshotExportTest {
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    @Test
    void anExportedSnapshotUnpacksElsewhereToTheSameLayerAndStillServesHere(@TempDir Path other) throws Exception {
        try (WorkerFixture w = SnapshotTest.worker(SnapshotTest.BASE)) {
            String src = SnapshotTest.create(w, "base");
            WorkerFixture.Result prep = SnapshotTest.sh(w, src, "root", "set -e; echo v1 > /home/user/s.txt; "
                    + "rm /etc/debian_version; rm -rf /etc/apt; mkdir /etc/apt; echo n > /etc/apt/only; "
                    + "mkdir -p '/srv/new dir/sub'; echo deep > '/srv/new dir/sub/d\u00e9ep'; ln -s s.txt /home/user/link; "
                    + "echo hard > /srv/h1; ln /srv/h1 /srv/h2; chmod 4750 /srv/h1; chown 1000:1000 '/srv/new dir/sub'; "
                    + "mkfifo /srv/fifo; : > /srv/empty; truncate -s 3M /srv/sparse; "
                    + "mkdir -p /srv/" + "x".repeat(120) + "/" + "y".repeat(120) + "; echo long > /srv/" + "x".repeat(120)
                    + "/" + "y".repeat(120) + "/f");
            assertThat(prep.exitCode()).as(prep.stderr()).isZero();
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src).setSnapshotId("exp:default").build());
            ImageStore store = w.host.snapshots().store();
            StoredImage before = store.findSnapshot("exp:default").orElseThrow();
            Path layer = before.layers().get(before.layers().size() - 1).dir();

            ExportedSnapshot exported = w.imageStore.exportSnapshot(SnapshotRef.newBuilder().setSnapshotId("exp:default").build());
            assertThat(exported.getManifestDigest()).startsWith("sha256:");
            assertThat(exported.getLayersWritten()).isEqualTo(1);
            // the name now points at the OCI form, over the very same layer directories
            StoredImage after = store.findSnapshot("exp:default").orElseThrow();
            assertThat(after.manifestDigest()).isEqualTo(exported.getManifestDigest());
            assertThat(after.layers().stream().map(StoredImage.Layer::dir).toList())
                    .isEqualTo(before.layers().stream().map(StoredImage.Layer::dir).toList());
            assertThat(w.imageStore.exportSnapshot(SnapshotRef.newBuilder().setSnapshotId("exp:default").build()))
                    .as("a second export answers the same image and writes nothing")
                    .satisfies(again -> {
                        assertThat(again.getManifestDigest()).isEqualTo(exported.getManifestDigest());
                        assertThat(again.getLayersWritten()).isZero();
                    });

            // another store pulls it over ReadImageBlob (manifest by digest, every blob checked)
            ImageStore elsewhere = ImageStore.open(other);
            StoredImage pulled = elsewhere.pull(ImageReference.parse("builds.agentbox.internal/snapshots/exp@"
                    + exported.getManifestDigest()), new HubImageSource(r -> w.imageStore.readImageBlob(r)), p -> { });
            assertThat(pulled.config().env()).isEqualTo(after.config().env());
            Map<String, String> mine = tree(layer);
            Map<String, String> theirs = tree(pulled.layers().get(pulled.layers().size() - 1).dir());
            assertThat(theirs).isEqualTo(mine);
            assertThat(mine).containsKeys("etc/debian_version", "etc/apt", "etc/apt/only", "srv/new dir/sub/d\u00e9ep",
                    "srv/h1", "srv/h2", "srv/fifo", "srv/sparse", "home/user/link");
            assertThat(mine.get("etc/debian_version")).as("a whiteout").isEqualTo("whiteout");
            assertThat(mine.get("etc/apt")).as("an opaque directory").contains("opaque=y");
            assertThat(mine.get("srv/h1")).contains("4750").contains("nlink=2");

            // a sandbox from the snapshot still starts here, on the same layer
            w.host.applyTemplates(List.of(SnapshotTest.BASE, SnapshotTest.fromSnapshot(SnapshotTest.BASE, "exp:default")));
            String copy = SnapshotTest.create(w, "exp:default");
            assertThat(SnapshotTest.sh(w, copy, "root", "cat /home/user/s.txt; test -e /etc/debian_version || echo gone; "
                    + "ls /etc/apt; stat -c '%a %h' /srv/h1").stdout()).isEqualTo("v1\ngone\nonly\n4750 2\n");

            // collection keeps the exported blobs while the snapshot lives, drops them with it
            w.host.snapshots().collect();
            assertThat(store.blob(exported.getManifestDigest())).isPresent();
            assertThatThrownBy(() -> w.imageStore.exportSnapshot(SnapshotRef.newBuilder().setSnapshotId("nope:default").build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                            assertThat(ErrorReason.of(e)).contains(ErrorReason.SNAPSHOT_NOT_FOUND));
            w.sandboxes.deleteSnapshot(SnapshotRef.newBuilder().setSnapshotId("exp:default").build());
            w.host.snapshots().collect();
            assertThat(store.blob(exported.getManifestDigest())).isEmpty();
        }
    }

    @Test
    void anImageSandboxesSnapshotReusesTheImagesLayerBlob(@TempDir Path other) throws Exception {
        Template busy = Template.newBuilder().setName("busy").setNetwork("none").setImage("docker.io/library/busybox:exp").build();
        try (WorkerFixture w = SnapshotTest.worker(SnapshotTest.BASE)) {
            TestImages.Image image = TestImages.busybox("busybox:exp");
            StoredImage base = w.host.snapshots().store().pull(ImageReference.parse("busybox:exp"), TestImages.source(image),
                    p -> { });
            w.host.applyTemplates(List.of(SnapshotTest.BASE, busy.toBuilder().setPoolSize(1).build()));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> w.host.pools().capacity()
                    .stream().anyMatch(p -> p.getTemplate().equals("busy") && p.getIdle() == 1));
            String src = SnapshotTest.create(w, "busy");
            assertThat(SnapshotTest.sh(w, src, "root", "echo img > /root/mark; rm /bin/true").exitCode()).isZero();
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src).setSnapshotId("t/img:v1").build());

            ExportedSnapshot exported = w.imageStore.exportSnapshot(SnapshotRef.newBuilder().setSnapshotId("t/img:v1").build());
            assertThat(exported.getLayersWritten()).as("only the snapshot's own layer").isEqualTo(1);
            ImageStore elsewhere = ImageStore.open(other);
            StoredImage pulled = elsewhere.pull(ImageReference.parse("builds.agentbox.internal/snapshots/img@"
                    + exported.getManifestDigest()), new HubImageSource(r -> w.imageStore.readImageBlob(r)), p -> { });
            assertThat(pulled.layers()).hasSize(base.layers().size() + 1);
            assertThat(pulled.layers().get(0).digest()).as("the image's own blob, as pulled").isEqualTo(base.layers().get(0).digest());
            assertThat(pulled.config().entrypoint()).isEqualTo(base.config().entrypoint());
        }
    }

    /**
     * Every entry of a layer directory with what a sandbox sees of it: type, mode, owner, link
     * count, content digest or link target, and the overlay's whiteout and opaque xattrs.
     */
    static Map<String, String> tree(Path root) throws IOException {
        Path real = root.toRealPath();
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.walk(real)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (p.equals(real)) {
                    continue;
                }
                Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid,nlink,rdev,size", NOFOLLOW);
                StringBuilder b = new StringBuilder(Integer.toOctalString((Integer) a.get("mode"))).append(' ')
                        .append(a.get("uid")).append(':').append(a.get("gid"));
                if (Files.isSymbolicLink(p)) {
                    b.append(" -> ").append(Files.readSymbolicLink(p));
                } else if (Files.isRegularFile(p, NOFOLLOW)) {
                    b.append(" nlink=").append(a.get("nlink")).append(" size=").append(a.get("size")).append(' ')
                            .append(sha256(p));
                } else if (!Files.isDirectory(p, NOFOLLOW)) {
                    b.append(" rdev=").append(a.get("rdev"));
                }
                UserDefinedFileAttributeView x = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW);
                // only files and directories: opening a FIFO to read its xattrs would wait for a writer
                if ((Files.isRegularFile(p, NOFOLLOW) || Files.isDirectory(p, NOFOLLOW)) && x != null) {
                    for (String name : x.list().stream().sorted().toList()) {
                        ByteBuffer v = ByteBuffer.allocate(x.size(name));
                        x.read(name, v);
                        b.append(' ').append(name.replace("overlay.", "")).append('=')
                                .append(new String(v.array(), 0, v.position(), StandardCharsets.UTF_8));
                    }
                }
                String d = b.toString();
                if (((Integer) a.get("mode") >> 12 == 2 && (Long) a.get("rdev") == 0) || d.contains(" whiteout=")) {
                    d = "whiteout"; // what a sandbox sees of it: the name is gone (its owner and mode show nowhere)
                }
                out.put(real.relativize(p).toString(), d);
            }
        }
        return out;
    }

    private static String sha256(Path p) throws IOException {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            try (var in = Files.newInputStream(p)) {
                byte[] buf = new byte[1 << 16];
                for (int n; (n = in.read(buf)) > 0; ) {
                    md.update(buf, 0, n);
                }
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
