package io.agentbox.worker.image;

import io.agentbox.protocol.image.PoolReadiness;
import java.util.Objects;

/**
 * Where a template's image is now.
 *
 * @param status {@link PoolReadiness#PULLING}, {@link PoolReadiness#READY} or {@link PoolReadiness#ERROR}
 * @param message progress while pulling ("3/7 layers, 412/1630 MB"), the error naming the image and
 *     the cause, empty when ready
 */
public record ImageState(String status, String message) {
    public static final ImageState READY = new ImageState(PoolReadiness.READY, "");
    /** Longest message kept; longer ones are cut (they travel in every capacity report). */
    public static final int MAX_MESSAGE_CHARS = 1024;

    public ImageState {
        Objects.requireNonNull(status, "status");
        if (!status.equals(PoolReadiness.PULLING) && !status.equals(PoolReadiness.READY) && !status.equals(PoolReadiness.ERROR)) {
            throw new IllegalArgumentException("image status must be pulling, ready or error, not '" + status + "'");
        }
        message = message == null ? "" : message;
        if (message.length() > MAX_MESSAGE_CHARS) {
            message = message.substring(0, MAX_MESSAGE_CHARS - 1) + "…";
        }
    }

    public static ImageState pulling(String progress) {
        return new ImageState(PoolReadiness.PULLING, progress);
    }

    public static ImageState error(String message) {
        return new ImageState(PoolReadiness.ERROR, message);
    }

    public boolean isReady() {
        return status.equals(PoolReadiness.READY);
    }
}
