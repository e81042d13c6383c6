package io.agentbox.worker.image;

import io.agentbox.protocol.v1.Template;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link TemplateImages} the test drives by hand: each {@link #prepare} of a template with an
 * image records a {@link Controlled} preparation that stays pulling until the test calls
 * {@link Controlled#progress}, {@link Controlled#ready} or {@link Controlled#fail}. Templates
 * without an image are ready at once, as the contract says. It stands in for the image store,
 * which is built on another branch; the pools around it are real.
 */
public final class ControlledImages implements TemplateImages {
    private final List<Controlled> prepared = new CopyOnWriteArrayList<>();

    @Override
    public Preparation prepare(Template template) {
        if (template.getImage().isEmpty()) {
            return Preparation.ready(Optional.empty());
        }
        Controlled c = new Controlled(template.getImage());
        prepared.add(c);
        return c;
    }

    /** Every preparation started, oldest first. */
    public List<Controlled> prepared() {
        return List.copyOf(prepared);
    }

    /** The latest preparation; fails when there is none. */
    public Controlled last() {
        if (prepared.isEmpty()) {
            throw new AssertionError("no image preparation was started");
        }
        return prepared.get(prepared.size() - 1);
    }

    /** One preparation; starts pulling with no progress. */
    public static final class Controlled implements Preparation {
        public final String image;
        private final CompletableFuture<Optional<SandboxImage>> result = new CompletableFuture<>();
        private volatile ImageState state = ImageState.pulling("");
        private volatile boolean cancelled;

        Controlled(String image) {
            this.image = image;
        }

        public void progress(String message) {
            state = ImageState.pulling(message);
        }

        public void ready(Optional<SandboxImage> image) {
            state = ImageState.READY;
            result.complete(image);
        }

        public void fail(String message) {
            state = ImageState.error(message);
            result.completeExceptionally(new IllegalStateException(message));
        }

        public boolean cancelled() {
            return cancelled;
        }

        @Override
        public ImageState state() {
            return state;
        }

        @Override
        public CompletableFuture<Optional<SandboxImage>> result() {
            return result;
        }

        /** As a store that aborts its pull: the result fails at once, on the caller's thread. */
        @Override
        public void cancel() {
            cancelled = true;
            result.completeExceptionally(new java.util.concurrent.CancellationException("image " + image + ": cancelled"));
        }
    }
}
