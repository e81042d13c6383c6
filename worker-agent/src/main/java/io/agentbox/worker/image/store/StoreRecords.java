package io.agentbox.worker.image.store;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/** The JSON documents an {@link ImageStore} keeps on disk. Unknown fields are ignored (newer writers). */
final class StoreRecords {
    private StoreRecords() {}

    /** {@code images/<manifest hex>.json}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record ImageRecord(String manifestDigest, BlobRef config, List<LayerRef> layers, String created, String storedAt) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record BlobRef(String digest, long size, String mediaType) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record LayerRef(String digest, long size, String mediaType, String diffId) {}

    /** {@code layers/<diff_id hex>/layer.json}, written before the layer directory is renamed into place. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record LayerRecord(String diffId, long tarBytes, long entries, List<String> skipped) {}
}
