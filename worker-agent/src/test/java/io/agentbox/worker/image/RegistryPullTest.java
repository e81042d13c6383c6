package io.agentbox.worker.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.TestImages.Hostile;
import io.agentbox.worker.image.TestImages.Image;
import io.agentbox.worker.image.registry.RegistryClient;
import io.agentbox.worker.image.registry.RegistryConfig;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.PullProgress;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry client and the image store together: images the tests build offline are pushed to
 * Debian's docker-registry on loopback and pulled into a store as a worker does.
 */
class RegistryPullTest {
    static LocalRegistry registry;
    static RegistryClient client;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        registry = LocalRegistry.start();
        client = new RegistryClient(RegistryConfig.defaults().withInsecure(Set.of(registry.hostPort())));
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    private ImageReference push(Image image, String repo, ManifestKind kind) throws Exception {
        new RegistryPush(registry).push(repo, "v1", image.layers().stream().map(TestImages.Layer::blob).toList(),
                image.config(), kind);
        return ImageReference.parse(registry.hostPort() + "/" + repo + ":v1");
    }

    @Test
    void pullsMultiLayerAndZstdImagesIntoTheStoreWithProgress() throws Exception {
        ImageReference multi = push(TestImages.multiLayer("x"), "multi", ManifestKind.OCI);
        ImageReference zstd = push(TestImages.zstd("y"), "zstd", ManifestKind.DOCKER_V2S2);
        ImageStore store = ImageStore.open(dir);
        List<PullProgress> seen = new CopyOnWriteArrayList<>();

        StoredImage a = store.pull(multi, client, seen::add);
        StoredImage b = store.pull(zstd, client, p -> {});

        assertThat(a.layers()).hasSize(TestImages.multiLayer("x").layers().size());
        assertThat(a.layers()).allSatisfy(l -> assertThat(Files.isDirectory(l.dir())).isTrue());
        assertThat(b.layers()).isNotEmpty();
        assertThat(store.find(multi.toString())).isPresent();
        PullProgress last = seen.get(seen.size() - 1);
        assertThat(last.layersDone()).isEqualTo(last.layersTotal());
        assertThat(last.bytesDone()).isEqualTo(last.bytesTotal()).isPositive();
        assertThat(last.message()).matches("\\d+/\\d+ layers, .*MB");
        assertThat(a.toSandboxImage().layers()).hasSameSizeAs(a.layers());
    }

    @Test
    void aHostileImageFromARegistryFailsNamingTheEntryAndLeavesNoLayer() throws Exception {
        Path canary = Files.createDirectory(dir.resolve("canary"));
        ImageReference evil = push(TestImages.hostile("z", Hostile.SYMLINK_WRITE, canary), "evil", ManifestKind.OCI);
        ImageStore store = ImageStore.open(dir.resolve("data"));

        assertThatThrownBy(() -> store.pull(evil, client, p -> {})).hasMessageContaining(Hostile.SYMLINK_WRITE.entry);
        assertThat(canary).isEmptyDirectory();
        assertThat(store.list()).isEmpty();
    }
}
