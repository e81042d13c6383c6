package io.agentbox.manager.builds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.ImageServiceGrpc;
import io.agentbox.wsproxy.blobs.BlobStore;
import io.grpc.Channel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The blobs of built images on the hub (docs/template-builds.md, "Where built layers live"): after
 * a build, {@link #copy} reads every blob of the image the hub lacks (manifest, config, layers)
 * from the building worker ({@code ImageService.ReadImageBlob}) into the hub's {@link BlobStore},
 * where every worker reads them ({@code SyncService.ReadBlob}). {@link #collect} removes blobs no
 * recorded image needs.
 *
 * <p>Limits: a manifest or config of at most {@link #MAX_JSON_BYTES}; a layer of at most
 * {@link BlobStore#MAX_BLOB_BYTES}; each blob read within {@link #BLOB_DEADLINE_MINUTES}.
 */
final class BuiltBlobs {
    static final long MAX_JSON_BYTES = 4L << 20;
    static final long BLOB_DEADLINE_MINUTES = 60;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final BlobStore store;

    BuiltBlobs(BlobStore store) {
        this.store = store;
    }

    /**
     * Copies image {@code manifestDigest} from the worker on {@code worker} into the hub's store,
     * skipping blobs the hub holds. The returned pin keeps every blob of the image through
     * collections until the caller has recorded the image (then closes it).
     *
     * @param log told one line per blob copied (digest, size)
     * @throws IOException naming the blob and the cause (the worker's error, a digest or size mismatch)
     */
    BlobStore.Pin copy(Channel worker, String manifestDigest, Consumer<String> log) throws IOException {
        ImageServiceGrpc.ImageServiceBlockingStub stub = ImageServiceGrpc.newBlockingStub(worker);
        BlobStore.Pin pin = store.pin(List.of(manifestDigest));
        try {
            byte[] manifest;
            Optional<Path> held = store.path(manifestDigest);
            if (held.isPresent()) {
                manifest = Files.readAllBytes(held.get());
            } else {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                BlobStreams.read(r -> stub.withDeadlineAfter(BLOB_DEADLINE_MINUTES, TimeUnit.MINUTES).readImageBlob(r),
                        manifestDigest, -1, MAX_JSON_BYTES, out, n -> { });
                manifest = out.toByteArray();
            }
            Map<String, Long> blobs = blobsOf(manifest, manifestDigest);
            BlobStore.Pin all = store.pin(blobs.keySet());
            pin.close();
            pin = all;
            byte[] m = manifest;
            store.put(manifestDigest, manifest.length, o -> o.write(m));
            for (Map.Entry<String, Long> b : blobs.entrySet()) {
                if (b.getKey().equals(manifestDigest)) {
                    continue;
                }
                long size = b.getValue();
                boolean wrote = store.put(b.getKey(), size, o -> BlobStreams.read(
                        r -> stub.withDeadlineAfter(BLOB_DEADLINE_MINUTES, TimeUnit.MINUTES).readImageBlob(r), b.getKey(), size,
                        size, o, n -> { }));
                if (wrote) {
                    log.accept("Copied blob " + b.getKey() + " (" + size + " bytes) to the hub");
                }
            }
            return pin;
        } catch (IOException | RuntimeException e) {
            pin.close();
            throw e;
        }
    }

    /**
     * Every blob of the image {@code manifest} (of digest {@code manifestDigest}), with its size:
     * the manifest itself, its config and its layers.
     *
     * @throws IOException when the manifest is not an image manifest with sha256 descriptors
     */
    static Map<String, Long> blobsOf(byte[] manifest, String manifestDigest) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(manifest);
        } catch (IOException e) {
            throw new IOException("manifest " + manifestDigest + " is not JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException("manifest " + manifestDigest + " is not a JSON object");
        }
        Map<String, Long> out = new LinkedHashMap<>();
        out.put(manifestDigest, (long) manifest.length);
        List<JsonNode> descriptors = new ArrayList<>();
        descriptors.add(root.path("config"));
        root.path("layers").forEach(descriptors::add);
        for (JsonNode d : descriptors) {
            String digest = d.path("digest").asText("");
            JsonNode size = d.path("size");
            if (!BlobStreams.isDigest(digest) || !size.canConvertToLong() || size.asLong() < 0) {
                throw new IOException("manifest " + manifestDigest + ": a descriptor without a sha256 digest and a size: " + d);
            }
            if (d == descriptors.get(0) && size.asLong() > MAX_JSON_BYTES) {
                throw new IOException("manifest " + manifestDigest + ": config of " + size.asLong() + " bytes");
            }
            out.put(digest, size.asLong());
        }
        return out;
    }

    /** The manifest digest of a built image's reference ({@code …@sha256:…}), if it names one. */
    static Optional<String> manifestOf(String image) {
        try {
            return Optional.ofNullable(ImageReference.parse(image).digest());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /**
     * Removes every blob that no image of {@code images} (references pinned to a manifest digest)
     * needs. An image whose manifest the hub does not hold keeps nothing (it was never copied).
     */
    BlobStore.Removed collect(Collection<String> images) throws IOException {
        Set<String> keep = new HashSet<>();
        for (String image : images) {
            Optional<String> manifest = manifestOf(image);
            if (manifest.isEmpty()) {
                continue;
            }
            Optional<Path> file = store.path(manifest.get());
            if (file.isEmpty()) {
                continue;
            }
            try {
                keep.addAll(blobsOf(Files.readAllBytes(file.get()), manifest.get()).keySet());
            } catch (IOException e) {
                keep.add(manifest.get()); // unreadable: keep what we can name, collect nothing of it by mistake
                throw new IOException("cannot collect blobs: " + e.getMessage(), e);
            }
        }
        return store.retainOnly(keep);
    }
}
