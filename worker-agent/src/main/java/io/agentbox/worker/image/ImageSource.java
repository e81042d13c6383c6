package io.agentbox.worker.image;

import io.agentbox.protocol.image.ImageReference;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.LongConsumer;

/**
 * Where image content comes from: a registry (pulls) or a local archive (imports). The image
 * store drives it; implementations are thread-safe.
 */
public interface ImageSource {

    /**
     * Resolves {@code ref} to this worker's platform manifest and its config.
     *
     * @throws IOException with a message naming the image and the cause (not found, unauthorised,
     *     no manifest for the platform, malformed manifest, registry unreachable)
     */
    ResolvedImage resolve(ImageReference ref) throws IOException;

    /**
     * Writes the blob {@code blob} of {@code ref} to {@code target} (created or replaced),
     * checking its SHA-256 digest and size on exactly the bytes received; on a mismatch or a
     * failure nothing is left at {@code target}.
     *
     * @param progress called with the number of new bytes as they arrive (may be called again
     *     for bytes of a retried range: callers count what they are told)
     * @throws IOException naming the blob's digest and the cause
     */
    void fetchBlob(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException;
}
