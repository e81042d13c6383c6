package io.agentbox.worker.runtime.local;

import java.util.function.LongPredicate;

/**
 * The init process of a local sandbox's container (catatonit, or the spawner) across resets, and
 * whether the sandbox still runs. A reset ends the current init and puts another in its place, so
 * an init that ended says the sandbox died only when no reset replaced it meanwhile: a reader that
 * took the old init just before a reset began would otherwise see it end and report a live
 * sandbox dead (and the pool would kill it). Thread-safe; one reset at a time (the caller
 * serialises them).
 */
final class ContainerInit {
    private volatile ProcessHandle current;
    /** True from {@link #replacing()} to {@link #settled()}: the sandbox counts as running meanwhile. */
    private volatile boolean replacing;

    ContainerInit(ProcessHandle first) {
        this.current = first;
    }

    ProcessHandle handle() {
        return current;
    }

    long pid() {
        return current.pid();
    }

    /** A reset is about to end the current init. */
    void replacing() {
        replacing = true;
    }

    /** The reset's new init; the sandbox counts as running until {@link #settled()}. */
    void replace(ProcessHandle next) {
        current = next;
    }

    /** The reset is over, whether it replaced the init or failed. */
    void settled() {
        replacing = false;
    }

    /**
     * Whether the container runs: its init has not ended, or the init that ended was (or is being)
     * replaced by a reset.
     *
     * @param ended whether the process of a host pid ended ({@link Reaped#ended})
     */
    boolean running(LongPredicate ended) {
        ProcessHandle seen = current;
        if (!ended.test(seen.pid())) {
            return true;
        }
        // read after the init was seen ended: a reset that ended it set one or the other first
        return replacing || current != seen;
    }
}
