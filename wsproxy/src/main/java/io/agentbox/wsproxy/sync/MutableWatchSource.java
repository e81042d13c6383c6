package io.agentbox.wsproxy.sync;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A {@link WatchSource} holding its items in memory; {@link #set} bumps the version and notifies. */
public final class MutableWatchSource<T> implements WatchSource<T> {
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile Snapshot<T> current;

    public MutableWatchSource(List<T> initial) {
        this.current = new Snapshot<>(1, List.copyOf(initial));
    }

    @Override
    public Snapshot<T> snapshot() {
        return current;
    }

    public synchronized void set(List<T> items) {
        current = new Snapshot<>(current.resourceVersion() + 1, List.copyOf(items));
        listeners.forEach(Runnable::run);
    }

    @Override
    public void addListener(Runnable onChange) {
        listeners.add(onChange);
    }
}
