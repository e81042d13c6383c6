package io.agentbox.worker.image.unpack;

import java.util.List;

/**
 * What one layer unpack did.
 *
 * @param diffId {@code sha256:<hex>} of the uncompressed tar stream (image-spec {@code config.md},
 *     {@code rootfs.diff_ids})
 * @param tarBytes length of the uncompressed tar stream
 * @param entries tar entries read
 * @param skipped entries and attributes left out, one line each ("dev/null: device node", ...)
 */
public record UnpackResult(String diffId, long tarBytes, long entries, List<String> skipped) {
    public UnpackResult {
        skipped = List.copyOf(skipped);
    }
}
