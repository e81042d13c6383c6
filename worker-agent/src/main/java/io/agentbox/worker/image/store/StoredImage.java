package io.agentbox.worker.image.store;

import io.agentbox.worker.image.BuiltImageLabels;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.SandboxImage;
import java.nio.file.Path;
import java.util.List;

/**
 * An image held by an {@link ImageStore}, every layer unpacked.
 *
 * @param manifestDigest digest of the image's manifest (for {@code docker save} archives without
 *     one: of the OCI manifest the store wrote for it)
 * @param references every reference pointing at it, normalised ({@code docker.io/library/busybox:latest})
 * @param configDigest digest of the config blob
 * @param created the config's {@code created} timestamp as written, empty when unset
 * @param layers bottom layer first
 * @param config the config's Env, Entrypoint, Cmd, WorkingDir, User
 */
public record StoredImage(String manifestDigest, List<String> references, String configDigest, String created,
                          List<Layer> layers, ImageConfig config) {
    public StoredImage {
        references = List.copyOf(references);
        layers = List.copyOf(layers);
    }

    /**
     * One layer of a stored image.
     *
     * @param digest the blob's digest (compressed as fetched)
     * @param size the blob's size in bytes
     * @param mediaType as the manifest gave it, may be empty
     * @param diffId digest of the uncompressed tar
     * @param dir the unpacked tree through its short link ({@code <store>/l/<id>}), for lowerdir strings
     */
    public record Layer(String digest, long size, String mediaType, String diffId, Path dir) {}

    /** Sum of the layer blobs' sizes (what a pull downloads). */
    public long size() {
        return layers.stream().mapToLong(Layer::size).sum();
    }

    /** For a runtime: layer directories bottom first, named after the first reference. */
    public SandboxImage toSandboxImage() {
        return toSandboxImage(references.isEmpty() ? manifestDigest : references.get(0));
    }

    /** For a runtime, named {@code reference} in messages. */
    public SandboxImage toSandboxImage(String reference) {
        return new SandboxImage(reference, layers.stream().map(Layer::dir).toList(), config,
                BuiltImageLabels.onBuiltInRoot(config));
    }
}
