package io.agentbox.manager.store;

import java.util.List;

/**
 * Every item of one kind as it was at {@code resourceVersion}: a watch sends this first, then the
 * changes after that version ({@link ChangeLog#changesSince}).
 *
 * @param resourceVersion the hub-wide version the items correspond to (at least 1)
 * @param items           the items, in the order the store's {@code snapshot()} documents
 */
public record Snapshot<T>(long resourceVersion, List<T> items) {
    public Snapshot {
        items = List.copyOf(items);
    }
}
