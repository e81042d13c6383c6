package io.agentbox.worker.image.store;

/** Told how a pull or import advances; called from the pulling thread, must not block. */
@FunctionalInterface
public interface PullListener {
    PullListener NONE = p -> {};

    void progress(PullProgress progress);
}
