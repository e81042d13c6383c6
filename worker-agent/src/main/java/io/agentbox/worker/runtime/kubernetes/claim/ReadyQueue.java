package io.agentbox.worker.runtime.kubernetes.claim;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Names of idle, ready pods of one pool in the order the informer first saw them ready (oldest
 * first), without duplicates, at most {@code limit} entries. Thread-safe.
 */
public final class ReadyQueue {
    private final int limit;
    private final LinkedHashSet<String> names = new LinkedHashSet<>();

    /** @throws IllegalArgumentException when {@code limit} is not positive */
    public ReadyQueue(int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("ready queue limit must be positive, got " + limit);
        }
        this.limit = limit;
    }

    /** Adds a pod; false when it is already queued or the queue is full (it is offered again on its next event). */
    public synchronized boolean offer(String name) {
        return names.size() < limit && names.add(name);
    }

    /** Removes and returns the oldest pod, or null when empty. */
    public synchronized String poll() {
        Iterator<String> it = names.iterator();
        if (!it.hasNext()) {
            return null;
        }
        String first = it.next();
        it.remove();
        return first;
    }

    /** true when the pod was queued (and so was not handed out by this queue). */
    public synchronized boolean remove(String name) {
        return names.remove(name);
    }

    public synchronized int size() {
        return names.size();
    }
}
