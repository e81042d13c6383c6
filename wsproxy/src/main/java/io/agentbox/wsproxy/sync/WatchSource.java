package io.agentbox.wsproxy.sync;

import java.util.List;

/**
 * A versioned collection the hub pushes to workers (templates, API key hashes).
 *
 * @param <T> item type (a protobuf message)
 */
public interface WatchSource<T> {
    /** The full set and the resource version it corresponds to. */
    Snapshot<T> snapshot();

    /** Registers a callback run (on any thread) after every change; it must not block. */
    void addListener(Runnable onChange);

    /** @param resourceVersion increases with every change; never 0 */
    record Snapshot<T>(long resourceVersion, List<T> items) {}
}
