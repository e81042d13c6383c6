package io.agentbox.worker.image.unpack;

/**
 * Bounds on one layer, so a hostile or broken blob cannot fill the disk or the heap.
 *
 * @param maxEntries tar entries (headers) per layer
 * @param maxBytes bytes of the uncompressed tar stream
 * @param maxPathLength characters of an entry name or hardlink target (a component is further
 *     limited to 255 bytes, Linux's NAME_MAX)
 */
public record UnpackLimits(long maxEntries, long maxBytes, int maxPathLength) {
    /** One million entries, 64 GiB, 4096 characters (Linux's PATH_MAX). */
    public static final UnpackLimits DEFAULT = new UnpackLimits(1_000_000, 64L << 30, 4096);

    public UnpackLimits {
        if (maxEntries < 1 || maxBytes < 1 || maxPathLength < 1) {
            throw new IllegalArgumentException("unpack limits must be positive");
        }
    }
}
