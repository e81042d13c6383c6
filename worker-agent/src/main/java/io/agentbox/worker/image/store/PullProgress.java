package io.agentbox.worker.image.store;

import java.util.Locale;

/**
 * Where a pull or import stands.
 *
 * @param layersDone layers present in the store (fetched and unpacked, or already there)
 * @param layersTotal layers of the image
 * @param bytesDone compressed layer bytes fetched or already present
 * @param bytesTotal compressed size of every layer, as the manifest gives it
 */
public record PullProgress(int layersDone, int layersTotal, long bytesDone, long bytesTotal) {
    /** "3/7 layers, 412/1630 MB" (MB = 10^6 bytes, rounded down; sizes under 1 MB show one decimal). */
    public String message() {
        return layersDone + "/" + layersTotal + " layers, " + mb(bytesDone, bytesTotal) + "/" + mb(bytesTotal, bytesTotal) + " MB";
    }

    private static String mb(long bytes, long scale) {
        if (scale < 10_000_000L) {
            return String.format(Locale.ROOT, "%.1f", Math.floor(bytes / 100_000.0) / 10.0);
        }
        return Long.toString(bytes / 1_000_000L);
    }
}
