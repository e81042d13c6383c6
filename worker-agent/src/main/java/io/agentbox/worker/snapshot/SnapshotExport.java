package io.agentbox.worker.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.worker.build.LayerWriter;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A snapshot's OCI image form (image.proto ExportSnapshot; docs/snapshots-and-reset.md, "Across
 * clusters"), so the hub can keep its blobs and other clusters pull it like a built template.
 *
 * <p>A snapshot image's layers are directories of the store, and its own layer has no blob. Each
 * layer becomes a blob: one the store holds for that directory already (a pulled or built layer, or a
 * lower snapshot exported before) is reused as it is; any other is written from the directory with
 * {@link LayerWriter} (store whiteouts to {@code .wh.NAME}, opaque directories to
 * {@code .wh..wh..opq}, host owners back to sandbox ids; mount points of the engine and extended
 * attributes are left out, as in a template build's layer). The config keeps Env, WorkingDir, User
 * and labels and lists the tars' diff_ids. {@link ImageStore#recordExport} then points the
 * snapshot's name at that image, whose layers are the same directories.
 *
 * <p>Not thread-safe per snapshot: {@link Snapshots} runs one export of a snapshot at a time.
 */
final class SnapshotExport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SnapshotExport() {}

    /**
     * Exports {@code snapshotId} (see the class comment); a snapshot exported before answers at once.
     *
     * @return empty when the store has no such snapshot
     * @throws IOException when a layer cannot be written or the snapshot changed meanwhile
     */
    static Optional<ExportedSnapshot> export(ImageStore store, String snapshotId) throws IOException {
        long started = System.nanoTime();
        Optional<StoredImage> found = store.findSnapshot(snapshotId);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        StoredImage image = found.get();
        if (store.blob(image.manifestDigest()).isPresent() && hasBlobs(image)) {
            return Optional.of(result(image.manifestDigest(), image.layers().stream().mapToLong(StoredImage.Layer::size).sum(), 0, started));
        }
        List<ImageStore.ExportLayer> layers = new ArrayList<>();
        List<String> tarDiffIds = new ArrayList<>();
        int written = 0;
        try {
            for (StoredImage.Layer l : image.layers()) {
                Optional<ImageStore.LayerBlob> held = store.layerBlob(l.diffId());
                if (held.isPresent()) {
                    layers.add(new ImageStore.ExportLayer(held.get().blob(), null, l.diffId()));
                    tarDiffIds.add(held.get().tarDiffId());
                    continue;
                }
                LayerWriter.Written w = LayerWriter.write(l.dir(), store.tempPath());
                layers.add(new ImageStore.ExportLayer(w.blob(), w.file(), l.diffId()));
                tarDiffIds.add(w.diffId());
                written++;
            }
            byte[] config = config(store, image, tarDiffIds);
            String manifest = store.recordExport(snapshotId, image.manifestDigest(), config, layers);
            return Optional.of(result(manifest, layers.stream().mapToLong(l -> l.blob().size()).sum(), written, started));
        } finally {
            for (ImageStore.ExportLayer l : layers) {
                if (l.file() != null) {
                    Files.deleteIfExists(l.file()); // not moved into the store: the export failed
                }
            }
        }
    }

    /** Whether every layer of a recorded image names a blob (an exported snapshot's do). */
    private static boolean hasBlobs(StoredImage image) {
        return image.layers().stream().allMatch(l -> !l.digest().equals(l.diffId()) && l.size() > 0);
    }

    /** The snapshot's config with {@code rootfs.diff_ids} of the tars. */
    private static byte[] config(ImageStore store, StoredImage image, List<String> tarDiffIds) throws IOException {
        Path file = store.blob(image.configDigest())
                .orElseThrow(() -> new IOException("snapshot config " + image.configDigest() + " is not in the store"));
        JsonNode root = JSON.readTree(Files.readAllBytes(file));
        if (root == null || !root.isObject()) {
            throw new IOException("snapshot config " + image.configDigest() + " is not a JSON object");
        }
        ObjectNode config = (ObjectNode) root;
        ObjectNode rootfs = config.putObject("rootfs");
        rootfs.put("type", "layers");
        ArrayNode ids = rootfs.putArray("diff_ids");
        tarDiffIds.forEach(ids::add);
        return JSON.writeValueAsBytes(config);
    }

    private static ExportedSnapshot result(String manifest, long bytes, int written, long started) {
        return ExportedSnapshot.newBuilder().setManifestDigest(manifest).setLayerBytes(bytes).setLayersWritten(written)
                .setTookMs((System.nanoTime() - started) / 1_000_000).build();
    }
}
