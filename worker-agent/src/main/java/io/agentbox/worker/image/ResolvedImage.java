package io.agentbox.worker.image;

import io.agentbox.protocol.image.ImageReference;
import java.util.List;

/**
 * One image resolved to the manifest of this worker's platform (an index or a manifest list
 * already narrowed to {@code linux/<arch>}).
 *
 * @param reference the reference pinned to {@code manifestDigest}
 * @param manifestDigest digest of the platform manifest's exact bytes
 * @param config the config blob's descriptor
 * @param configJson the config blob's bytes, already checked against {@code config.digest()}
 * @param layers layer blobs, bottom layer first
 */
public record ResolvedImage(ImageReference reference, String manifestDigest, Descriptor config, byte[] configJson,
                            List<Descriptor> layers) {
    public ResolvedImage {
        layers = List.copyOf(layers);
    }
}
