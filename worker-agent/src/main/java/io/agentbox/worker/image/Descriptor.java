package io.agentbox.worker.image;

/**
 * An OCI content descriptor (image-spec {@code descriptor.md}): what a manifest says about one
 * blob.
 *
 * @param mediaType media type as the manifest gives it; may be empty (some tools omit it: then
 *     the store sniffs the compression from the blob's first bytes)
 * @param digest {@code sha256:<64 lowercase hex>}
 * @param size length of the blob in bytes
 */
public record Descriptor(String mediaType, String digest, long size) {}
