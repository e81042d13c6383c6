package io.agentbox.protocol.image;

import io.agentbox.protocol.v1.PoolCapacity;

/**
 * Whether a worker's pool of a template can hand out sandboxes, as reported in
 * {@code PoolCapacity.status} / {@code status_message} (sync.proto), and the one wording of
 * "not ready" that the worker's claims and the hub's creates both answer with, e.g.
 * {@code template 'py' is not ready: pulling docker.io/library/python:3.12 on cluster c1: 3/7 layers, 412/1630 MB}.
 */
public final class PoolReadiness {
    /** The template's image is being fetched; the message is the progress. */
    public static final String PULLING = "pulling";
    /** Sandboxes can be started (every template without an image is ready at once). */
    public static final String READY = "ready";
    /** Preparing the image failed; the message names the image and the cause. The worker retries. */
    public static final String ERROR = "error";

    private PoolReadiness() {}

    /** The reported status; empty (workers before the field existed) counts as {@link #READY}. */
    public static String status(PoolCapacity p) {
        return p.getStatus().isEmpty() ? READY : p.getStatus();
    }

    public static boolean isReady(PoolCapacity p) {
        return READY.equals(status(p));
    }

    /**
     * One cluster's part of a not-ready message: {@code pulling IMAGE on cluster C: MESSAGE} or
     * {@code error on cluster C: MESSAGE}.
     *
     * @param image the template's image reference, may be empty
     * @param message the worker's status message, may be empty
     */
    public static String describe(String status, String image, String clusterId, String message) {
        StringBuilder b = new StringBuilder(status);
        if (PULLING.equals(status) && image != null && !image.isEmpty()) {
            b.append(' ').append(image);
        }
        b.append(" on cluster ").append(clusterId);
        if (message != null && !message.isEmpty()) {
            b.append(": ").append(message);
        }
        return b.toString();
    }

    /** {@code template 'NAME' is not ready: DETAIL}. */
    public static String notReady(String template, String detail) {
        return "template '" + template + "' is not ready: " + detail;
    }
}
