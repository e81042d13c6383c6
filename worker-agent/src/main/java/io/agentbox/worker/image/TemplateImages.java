package io.agentbox.worker.image;

import io.agentbox.protocol.v1.Template;
import java.util.Optional;

/**
 * Gets templates' images ready for the worker's pools: a pool of a template with an
 * {@code image} starts no sandbox until its {@link Preparation} is ready, and reports the
 * preparation's state to the hub meanwhile. Implementations: the image store (pull, unpack,
 * layers shared between templates); {@link #BUILT_IN_ONLY} where there is none. Thread-safe.
 */
public interface TemplateImages {

    /**
     * Starts preparing {@code template}'s image (or joins a preparation of the same image under
     * way) and returns at once. A template without an image is ready at once with
     * {@code Optional.empty()} (the runtime's built-in root).
     */
    Preparation prepare(Template template);

    /** Templates without an image only: a template with one fails with a message saying so. */
    TemplateImages BUILT_IN_ONLY = template -> template.getImage().isEmpty()
            ? Preparation.ready(Optional.empty())
            : Preparation.failed("image " + template.getImage() + ": this worker has no image store, so it runs "
                    + "templates without an image only");
}
