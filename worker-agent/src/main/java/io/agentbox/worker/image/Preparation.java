package io.agentbox.worker.image;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One attempt at getting a template's image ready on this worker (see {@link TemplateImages}).
 * It ends once: ready or failed; the pool that asked retries a failed one with a new
 * {@link TemplateImages#prepare} after a pause. Thread-safe.
 */
public interface Preparation {

    /** Now: pulling with progress, ready, or error with the message (polled for every capacity report). */
    ImageState state();

    /**
     * Completes with the image once it is ready ({@code Optional.empty()}: the runtime's built-in
     * root filesystem, for templates without an image), or exceptionally with an exception whose
     * message names the image and the cause. Callbacks must not block.
     */
    CompletableFuture<Optional<SandboxImage>> result();

    /** The pool no longer wants it (template changed or removed): stop if still running, release what it holds. */
    void cancel();

    /** A preparation that is ready already. */
    static Preparation ready(Optional<SandboxImage> image) {
        CompletableFuture<Optional<SandboxImage>> done = CompletableFuture.completedFuture(image);
        return new Preparation() {
            @Override
            public ImageState state() {
                return ImageState.READY;
            }

            @Override
            public CompletableFuture<Optional<SandboxImage>> result() {
                return done;
            }

            @Override
            public void cancel() {}
        };
    }

    /** A preparation that failed already with {@code message}. */
    static Preparation failed(String message) {
        CompletableFuture<Optional<SandboxImage>> done = CompletableFuture.failedFuture(new IllegalStateException(message));
        ImageState state = ImageState.error(message);
        return new Preparation() {
            @Override
            public ImageState state() {
                return state;
            }

            @Override
            public CompletableFuture<Optional<SandboxImage>> result() {
                return done;
            }

            @Override
            public void cancel() {}
        };
    }
}
