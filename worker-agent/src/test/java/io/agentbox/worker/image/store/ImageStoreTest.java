package io.agentbox.worker.image.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.LayerTar;
import io.agentbox.worker.image.MemoryImageSource;
import io.agentbox.worker.image.OverlayMount;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.TestImages.Compress;
import io.agentbox.worker.image.TestImages.Hostile;
import io.agentbox.worker.image.TestImages.Image;
import io.agentbox.worker.image.unpack.Trees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The image store with real unpacking, real overlay mounts (as root) and real archives on disk. */
class ImageStoreTest {
    @TempDir
    Path tmp;
    Path data;
    Path canary;
    ImageStore store;

    @BeforeEach
    void open() throws IOException {
        data = Files.createDirectory(tmp.resolve("worker"));
        // the layer trees are traversed by the sandboxes' host uids
        Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        store = ImageStore.open(data);
        canary = Files.createTempDirectory(Path.of("/tmp"), "canary-dir");
    }

    @AfterEach
    void removeCanary() throws IOException {
        Trees.deleteRecursively(canary);
    }

    private static List<Path> topFirst(SandboxImage image) {
        List<Path> l = new ArrayList<>(image.layers());
        Collections.reverse(l);
        return l;
    }

    @Test
    void pullsUnpacksAndMountsAMultiLayerImage() throws IOException {
        Image image = TestImages.multiLayer("test/multi:1");
        List<String> progress = Collections.synchronizedList(new ArrayList<>());
        StoredImage stored = store.pull(ImageReference.parse("test/multi:1"), TestImages.source(image), p -> progress.add(p.message()));

        assertThat(stored.manifestDigest()).isEqualTo(image.manifestDigest());
        assertThat(stored.references()).containsExactly("docker.io/test/multi:1");
        assertThat(stored.layers()).extracting(StoredImage.Layer::diffId)
                .containsExactlyElementsOf(image.layers().stream().map(TestImages.Layer::diffId).toList());
        assertThat(stored.size()).isEqualTo(image.size());
        assertThat(progress.get(0)).startsWith("0/3 layers");
        assertThat(progress.get(progress.size() - 1)).startsWith("3/3 layers, ");
        assertThat(store.find("docker.io/test/multi:1")).contains(stored);
        assertThat(store.find("test/multi@" + image.manifestDigest())).isPresent();
        assertThat(store.find("test/multi:2")).isEmpty();

        SandboxImage sandbox = stored.toSandboxImage();
        assertThat(sandbox.config().cmd()).containsExactly("/bin/sh");
        assertThat(sandbox.config().env()).anySatisfy(e -> assertThat(e).startsWith("PATH="));
        for (Path layer : sandbox.layers()) {
            assertThat(layer.getParent()).isEqualTo(store.root().resolve("l"));
            assertThat(layer.getFileName().toString()).hasSize(8);
        }
        Path merged = Files.createDirectory(tmp.resolve("merged"));
        try (OverlayMount m = OverlayMount.mount(topFirst(sandbox), merged)) {
            Path r = m.root();
            assertThat(r.resolve("etc/removed")).doesNotExist();
            assertThat(Files.readString(r.resolve("etc/keep"))).isEqualTo("keep");
            try (Stream<Path> dd = Files.list(r.resolve("dd"))) {
                assertThat(dd.map(p -> p.getFileName().toString())).containsExactly("c");
            }
            assertThat(r.resolve("gone")).doesNotExist();
            assertThat(Files.getAttribute(r.resolve("x/h2"), "unix:ino")).isEqualTo(Files.getAttribute(r.resolve("x/h1"), "unix:ino"));
            assertThat(Files.getAttribute(r.resolve("hl/two"), "unix:ino")).isEqualTo(Files.getAttribute(r.resolve("hl/one"), "unix:ino"));
            assertThat((Integer) Files.getAttribute(r.resolve("bin/suid"), "unix:mode") & 07777).isEqualTo(04755);
        }
    }

    @Test
    void busyboxRootRunsAShellAndUid999IsShifted() throws Exception {
        store.pull(ImageReference.parse("busybox:test"), TestImages.source(TestImages.busybox("busybox:test")), PullListener.NONE);
        store.pull(ImageReference.parse("app:999"), TestImages.source(TestImages.uid999("app:999")), PullListener.NONE);
        SandboxImage busybox = store.find("busybox:test").orElseThrow().toSandboxImage();
        SandboxImage app = store.find("docker.io/library/app:999").orElseThrow().toSandboxImage();
        List<Path> stack = new ArrayList<>(topFirst(app));
        stack.addAll(topFirst(busybox));
        Path merged = Files.createDirectory(tmp.resolve("merged"));
        try (OverlayMount m = OverlayMount.mount(stack, merged)) {
            Process p = new ProcessBuilder("chroot", m.root().toString(), "/bin/sh", "-c",
                    "echo hello from $(readlink /bin/sh); stat -c %u:%g /home/app/data").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(out).contains("hello from /bin/busybox").contains("1000999:1000999");
        }
    }

    @Test
    void hostileImagesFailNamingTheEntryAndLeaveNothing() throws IOException {
        for (Hostile kind : Hostile.values()) {
            Image image = TestImages.hostile("evil:" + kind.name().toLowerCase().replace('_', '-'), kind, canary);
            assertThatThrownBy(() -> store.pull(ImageReference.parse(image.name()), TestImages.source(image), PullListener.NONE))
                    .as(kind.name())
                    .hasMessageContaining(image.name())
                    .hasMessageContaining("'" + kind.entry + "'");
            assertThat(store.find(image.name())).isEmpty();
        }
        assertThat(children(canary)).isEmpty();
        assertThat(Path.of("/etc/x")).doesNotExist();
        assertThat(children(store.root().resolve("layers"))).isEmpty();
        assertThat(children(store.root().resolve("images"))).isEmpty();
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
        assertThat(children(store.root().resolve("l"))).isEmpty();
    }

    @Test
    void diffIdMismatchFails() throws IOException {
        TestImages.Layer layer = TestImages.layer(new LayerTar().file("f", "x").tar(), Compress.GZIP);
        String wrong = LayerTar.sha256("something else".getBytes(StandardCharsets.UTF_8));
        Image image = TestImages.image("liar:1", List.of(layer), null, List.of(wrong));
        assertThatThrownBy(() -> store.pull(ImageReference.parse("liar:1"), TestImages.source(image), PullListener.NONE))
                .hasMessageContaining("docker.io/library/liar:1")
                .hasMessageContaining(layer.digest())
                .hasMessageContaining("unpacks to diff_id " + layer.diffId())
                .hasMessageContaining(wrong);
        assertThat(children(store.root().resolve("layers"))).isEmpty();
        assertThat(store.list()).isEmpty();
    }

    @Test
    void importsDockerSaveOciLayoutDirAndTar() throws IOException {
        Image multi = TestImages.multiLayer("localhost:5000/multi:2");
        Image zstd = TestImages.zstd("zstd:1");
        Path save = tmp.resolve("save.tar");
        TestImages.writeDockerSave(save, multi, zstd);
        assertThat(store.importArchive(save, PullListener.NONE)).containsExactly("localhost:5000/multi:2", "docker.io/library/zstd:1");
        StoredImage fromSave = store.find("localhost:5000/multi:2").orElseThrow();
        assertThat(fromSave.layers()).extracting(StoredImage.Layer::diffId)
                .containsExactlyElementsOf(multi.layers().stream().map(TestImages.Layer::diffId).toList());
        // docker save carries uncompressed layers: same diff_ids, so the trees are shared with a pull
        store.pull(ImageReference.parse(zstd.name()), TestImages.source(zstd), PullListener.NONE);
        assertThat(store.layersUnpacked()).isEqualTo(4);

        Path layoutDir = tmp.resolve("layout");
        Image uid = TestImages.uid999("oci/dir:1");
        TestImages.writeOciLayout(layoutDir, true, uid);
        assertThat(store.importArchive(layoutDir, PullListener.NONE)).containsExactly("docker.io/oci/dir:1");
        assertThat(store.find("oci/dir:1").orElseThrow().manifestDigest()).isEqualTo(uid.manifestDigest());

        Path layoutTar = tmp.resolve("layout.tar");
        Image busybox = TestImages.busybox("unused:0");
        TestImages.writeOciLayoutTar(layoutTar, false, busybox);
        assertThatThrownBy(() -> store.importArchive(layoutTar, PullListener.NONE)).hasMessageContaining("has no name")
                .hasMessageContaining("--tag");
        List<String> messages = new ArrayList<>();
        assertThat(store.importArchive(layoutTar, "mine/busybox:local", p -> messages.add(p.message())))
                .containsExactly("docker.io/mine/busybox:local");
        assertThat(messages.get(messages.size() - 1)).startsWith("1/1 layers");

        Path gz = tmp.resolve("save.tar.gz");
        Files.write(gz, LayerTar.gzip(Files.readAllBytes(save)));
        ImageStore other = ImageStore.open(tmp.resolve("other"));
        assertThat(other.importArchive(gz, PullListener.NONE)).hasSize(2);

        assertThat(store.list()).extracting(StoredImage::manifestDigest)
                .contains(uid.manifestDigest(), busybox.manifestDigest(), fromSave.manifestDigest());
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
    }

    @Test
    void anotherProcessesImportIsSeenAtOnce() throws IOException {
        ImageStore cli = ImageStore.open(data);
        Path layout = tmp.resolve("layout");
        TestImages.writeOciLayout(layout, true, TestImages.zstd("seen:1"));
        cli.importArchive(layout, PullListener.NONE);
        assertThat(store.find("seen:1")).isPresent();
    }

    @Test
    void malformedArchivesGiveClearErrors() throws IOException {
        Path junk = tmp.resolve("junk.tar");
        Files.write(junk, "this is not an archive at all".repeat(40).getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> store.importArchive(junk, PullListener.NONE)).hasMessageContaining(junk.toString());
        Path empty = tmp.resolve("empty-dir");
        Files.createDirectory(empty);
        assertThatThrownBy(() -> store.importArchive(empty, PullListener.NONE))
                .hasMessageContaining("neither an OCI image layout").hasMessageContaining("manifest.json");
        Path badJson = Files.createDirectory(tmp.resolve("bad-json"));
        Files.writeString(badJson.resolve("manifest.json"), "[{\"Config\": ");
        assertThatThrownBy(() -> store.importArchive(badJson, PullListener.NONE))
                .hasMessageContaining("manifest.json is not valid JSON");
        Path escape = Files.createDirectory(tmp.resolve("escape"));
        Files.writeString(escape.resolve("manifest.json"), "[{\"Config\": \"../../etc/passwd\", \"RepoTags\": [\"x:1\"], \"Layers\": []}]");
        assertThatThrownBy(() -> store.importArchive(escape, PullListener.NONE)).hasMessageContaining("leaves the archive");
        Path missingBlob = tmp.resolve("missing");
        TestImages.writeOciLayout(missingBlob, true, TestImages.zstd("gone:1"));
        try (Stream<Path> s = Files.list(missingBlob.resolve("blobs/sha256"))) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Files.delete(p);
            }
        }
        assertThatThrownBy(() -> store.importArchive(missingBlob, PullListener.NONE)).hasMessageContaining("no file 'blobs/sha256/");
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
    }

    @Test
    void gcKeepsSharedLayersAndRemovesTheRest() throws IOException {
        TestImages.Layer base = TestImages.layer(new LayerTar().dir("base").file("base/f", "base").tar(), Compress.GZIP);
        TestImages.Layer a1 = TestImages.layer(new LayerTar().file("a", "a").tar(), Compress.GZIP);
        TestImages.Layer b1 = TestImages.layer(new LayerTar().file("b", "b").tar(), Compress.ZSTD);
        Image a = TestImages.image("gc/a:1", base, a1);
        Image b = TestImages.image("gc/b:1", base, b1);
        MemoryImageSource source = TestImages.source(a, b);
        store.pull(ImageReference.parse("gc/a:1"), source, PullListener.NONE);
        store.pull(ImageReference.parse("gc/b:1"), source, PullListener.NONE);
        assertThat(children(store.root().resolve("layers"))).hasSize(3);

        ImageStore.GcResult r = store.gcReleased(Set.of("gc/b:1"));
        assertThat(r.images()).isEqualTo(1);
        assertThat(r.layers()).isEqualTo(1);
        assertThat(r.blobs()).isEqualTo(2); // b's config and b1; the shared base blob stays
        assertThat(store.find("gc/b:1")).isEmpty();
        StoredImage kept = store.find("gc/a:1").orElseThrow();
        for (StoredImage.Layer l : kept.layers()) {
            assertThat(l.dir().resolve(".")).isDirectory();
        }
        assertThat(children(store.root().resolve("layers"))).containsExactlyInAnyOrder(base.diffId().substring(7), a1.diffId().substring(7));
        assertThat(children(store.root().resolve("l"))).hasSize(2);

        store.gcReleased(Set.of("gc/a:1"));
        assertThat(store.list()).isEmpty();
        assertThat(children(store.root().resolve("layers"))).isEmpty();
        assertThat(children(store.root().resolve("blobs/sha256"))).isEmpty();
        assertThat(children(store.root().resolve("l"))).isEmpty();
    }

    @Test
    void aLeaseKeepsABuildsLayerFromGcUntilTheImageIsRecorded() throws IOException {
        TestImages.Layer step = TestImages.layer(new LayerTar().file("step.txt", "made by a step").tar(), Compress.GZIP);
        Image built = TestImages.image("builds.test/x:1", step);
        Descriptor blob = new Descriptor(step.mediaType(), step.digest(), step.blob().length);
        StoredImage image;
        try (Lease lease = store.lease()) {
            Path file = Files.write(store.tempPath(), step.blob());
            StoredImage.Layer layer = store.addLayer(lease, file, blob, step.diffId(), List.of());
            ImageStore.GcResult r = store.gcReleased(Set.of()); // a template's image released meanwhile
            assertThat(r.layers()).isZero();
            assertThat(r.blobs()).isZero();
            assertThat(store.findLayer(lease, blob, step.diffId())).isPresent();
            image = store.commit(lease, "builds.test/x:1", built.config(), List.of(layer));
            assertThat(store.gcReleased(Set.of("builds.test/x:1")).images()).isEqualTo(1); // recorded; released, so GC takes it
        }
        assertThat(image.layers()).hasSize(1);

        // once the lease is closed the pieces are GC's again: a commit after that fails and says why
        StoredImage.Layer layer;
        try (Lease lease = store.lease()) {
            Path file = Files.write(store.tempPath(), step.blob());
            layer = store.addLayer(lease, file, blob, step.diffId(), List.of());
        }
        ImageStore.GcResult r = store.gcReleased(Set.of());
        assertThat(r.layers()).isEqualTo(1);
        assertThat(r.blobs()).isEqualTo(3); // the layer's, and the first image's config and manifest the lease held
        try (Lease lease = store.lease()) {
            assertThat(store.findLayer(lease, blob, step.diffId())).isEmpty();
            assertThatThrownBy(() -> store.commit(lease, "builds.test/x:1", built.config(), List.of(layer)))
                    .hasMessageContaining("blob " + step.digest() + " of image builds.test/x:1 is no longer in the store");
        }
    }

    @Test
    void gcReleasedKeepsEveryImageANameNotReleasedNames() throws IOException {
        TestImages.Layer a1 = TestImages.layer(new LayerTar().file("a", "a").tar(), Compress.GZIP);
        TestImages.Layer b1 = TestImages.layer(new LayerTar().file("b", "b").tar(), Compress.GZIP);
        MemoryImageSource source = TestImages.source(TestImages.image("gc/a:1", a1), TestImages.image("gc/b:1", b1));
        store.pull(ImageReference.parse("gc/a:1"), source, PullListener.NONE);
        store.pull(ImageReference.parse("gc/b:1"), source, PullListener.NONE);

        assertThat(store.gcReleased(Set.of()).images()).isZero();
        ImageStore.GcResult r = store.gcReleased(Set.of("gc/b:1", "not a reference!"));
        assertThat(r.images()).isEqualTo(1);
        assertThat(r.layers()).isEqualTo(1);
        assertThat(store.find("gc/b:1")).isEmpty();
        assertThat(store.find("docker.io/gc/a:1")).isPresent(); // names compare normalised
        assertThat(store.gcReleased(Set.of("docker.io/gc/a:1")).images()).isEqualTo(1);
        assertThat(store.list()).isEmpty();
    }

    @Test
    void concurrentPullsSharingALayerUnpackItOnce() throws Exception {
        TestImages.Layer base = TestImages.layer(new LayerTar().dir("base").file("base/f", "x".repeat(100_000)).tar(), Compress.GZIP);
        Image a = TestImages.image("c/a:1", base, TestImages.layer(new LayerTar().file("a", "a").tar(), Compress.GZIP));
        Image b = TestImages.image("c/b:1", base, TestImages.layer(new LayerTar().file("b", "b").tar(), Compress.GZIP));
        MemoryImageSource source = TestImages.source(a, b).delay(base.digest(), 500);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch go = new CountDownLatch(1);
            Future<StoredImage> fa = pool.submit(() -> {
                go.await();
                return store.pull(ImageReference.parse("c/a:1"), source, PullListener.NONE);
            });
            Future<StoredImage> fb = pool.submit(() -> {
                go.await();
                return store.pull(ImageReference.parse("c/b:1"), source, PullListener.NONE);
            });
            go.countDown();
            StoredImage sa = fa.get(60, TimeUnit.SECONDS);
            StoredImage sb = fb.get(60, TimeUnit.SECONDS);
            assertThat(sa.layers().get(0).dir()).isEqualTo(sb.layers().get(0).dir());
        } finally {
            pool.shutdownNow();
        }
        assertThat(source.fetches(base.digest())).isEqualTo(1);
        assertThat(store.layersUnpacked()).isEqualTo(3);
    }

    @Test
    void leftoversOfADeadProcessAreRemovedAtOpen() throws IOException {
        Path stale = Files.createDirectories(store.root().resolve("tmp/999999999-1-1/root/deep"));
        Files.writeString(stale.resolve("half"), "x");
        Files.createSymbolicLink(store.root().resolve("l/deadbeef"), Path.of("../layers/deadbeef/root"));
        ImageStore.open(data);
        assertThat(children(store.root().resolve("tmp"))).isEmpty();
        assertThat(children(store.root().resolve("l"))).isEmpty();
    }

    static List<String> children(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).toList();
        }
    }
}
