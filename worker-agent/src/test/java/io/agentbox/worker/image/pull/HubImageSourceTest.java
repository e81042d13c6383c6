package io.agentbox.worker.image.pull;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pulls of built images from the hub's blobs ({@link HubImageSource}) over gRPC, served by the same
 * {@link BlobStreams#serve} the hub's sync service uses, into a real {@link ImageStore}: a whole
 * image arrives and unpacks; a corrupted, a short or a missing blob is refused naming the blob,
 * and the store is left without any piece of the image.
 */
class HubImageSourceTest {
    @TempDir
    Path dir;

    private final ExecutorService executor = Executors.newCachedThreadPool();
    private Server server;
    private ManagedChannel channel;
    private Path hubBlobs;
    private TestImages.Image image;
    private ImageReference ref;

    @BeforeEach
    void serveHubBlobs() throws Exception {
        hubBlobs = Files.createDirectories(dir.resolve("hub/sha256"));
        image = TestImages.multiLayer(ImageReference.BUILDS_REGISTRY + "/tpl:b1");
        for (var e : TestImages.blobs(List.of(image)).entrySet()) {
            Files.write(hubBlobs.resolve(e.getKey().substring(7)), e.getValue());
        }
        Files.write(hubBlobs.resolve(image.manifestDigest().substring(7)), image.manifest());
        ref = ImageReference.parse(image.name()).withDigest(image.manifestDigest());
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).addService(new SyncServiceGrpc.SyncServiceImplBase() {
            @Override
            public void readBlob(BlobRef request, StreamObserver<BlobChunk> response) {
                BlobStreams.serve(request, response, d -> {
                    Path p = hubBlobs.resolve(d.substring(7));
                    return Files.isRegularFile(p) ? p : null;
                }, executor, "the hub");
            }
        }).build().start();
        channel = InProcessChannelBuilder.forName(name).build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
        executor.shutdownNow();
    }

    @Test
    void aBuiltImageIsPulledFromTheHubByItsManifestDigest() throws IOException {
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        StoredImage stored = store.pull(ref, HubImageSource.over(channel), p -> { });
        assertThat(stored.manifestDigest()).isEqualTo(image.manifestDigest());
        assertThat(stored.layers()).hasSize(3);
        assertThat(Files.readString(stored.layers().get(2).dir().resolve("top"))).isEqualTo("top");
        assertThat(store.find(ref.toString())).isPresent();
    }

    @Test
    void aCorruptedLayerIsRefusedAndNothingOfTheImageStays() throws IOException {
        Path layer = hubBlobs.resolve(image.layers().get(1).digest().substring(7));
        byte[] bytes = Files.readAllBytes(layer);
        bytes[bytes.length / 2] ^= 0x55; // same size, other bytes
        Files.write(layer, bytes);
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        assertThatThrownBy(() -> store.pull(ref, HubImageSource.over(channel), p -> { }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(image.layers().get(1).digest()).hasMessageContaining("digest mismatch");
        assertNothingOf(store, image.layers().get(1).digest());
    }

    @Test
    void aShortLayerIsRefusedAndNothingOfTheImageStays() throws IOException {
        Path layer = hubBlobs.resolve(image.layers().get(0).digest().substring(7));
        byte[] bytes = Files.readAllBytes(layer);
        Files.write(layer, java.util.Arrays.copyOf(bytes, bytes.length - 7));
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        assertThatThrownBy(() -> store.pull(ref, HubImageSource.over(channel), p -> { }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(image.layers().get(0).digest())
                .hasMessageContaining("the sender has " + (bytes.length - 7) + " bytes, expected " + bytes.length);
        assertNothingOf(store, image.layers().get(0).digest());
    }

    @Test
    void aLayerTheHubLacksIsNamedAndNothingStays() throws IOException {
        Files.delete(hubBlobs.resolve(image.layers().get(2).digest().substring(7)));
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        assertThatThrownBy(() -> store.pull(ref, HubImageSource.over(channel), p -> { }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(image.layers().get(2).digest()).hasMessageContaining("the hub does not hold it");
        assertNothingOf(store, image.layers().get(2).digest());
    }

    @Test
    void aReferenceWithoutAManifestDigestIsRefused() throws IOException {
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        assertThatThrownBy(() -> store.pull(ImageReference.parse(image.name()), HubImageSource.over(channel), p -> { }))
                .isInstanceOf(IOException.class).hasMessageContaining("manifest digest");
    }

    @Test
    void aManifestThatIsNotTheDigestAskedForIsRefused() throws IOException {
        // the hub's file under the manifest's name holds other bytes (the config's)
        Files.write(hubBlobs.resolve(image.manifestDigest().substring(7)), image.config());
        ImageStore store = ImageStore.open(dir.resolve("worker"));
        assertThatThrownBy(() -> store.pull(ref, HubImageSource.over(channel), p -> { }))
                .isInstanceOf(IOException.class).hasMessageContaining("digest mismatch");
        assertNothingOf(store, image.manifestDigest());
    }

    /** No image record, no blob {@code bad}, no half-made file left in the store's temp directory. */
    private static void assertNothingOf(ImageStore store, String bad) throws IOException {
        assertThat(store.list()).isEmpty();
        assertThat(store.blob(bad)).isEmpty();
        try (Stream<Path> tmp = Files.list(store.root().resolve("tmp"))) {
            assertThat(tmp.toList()).isEmpty();
        }
    }
}
