package io.agentbox.mux.util;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Daemon threads for background work (timers, pipe drains, blocking I/O off an event loop): such a
 * thread never keeps the JVM alive, so a process ends when its main work ends even if a close was
 * missed. Threads are plain {@link Thread}s with the names given here, so thread dumps and log
 * lines keep naming the job. Every module of ours depends on {@code mux}, so the helper lives here.
 *
 * <p>Netty's {@code DefaultThreadFactory} is not used for these: it appends a pool number to every
 * name and makes {@code FastThreadLocalThread}s, which Netty's allocators treat differently from
 * plain threads; the event-loop groups in {@code MuxEventLoops} keep using it.
 */
public final class DaemonThreads {
    private DaemonThreads() {}

    /** A factory whose every thread is named exactly {@code name}: for single-thread executors. */
    public static ThreadFactory named(String name) {
        Objects.requireNonNull(name, "name");
        return r -> daemon(r, name);
    }

    /**
     * A factory naming its threads {@code prefix-1}, {@code prefix-2}, ... in creation order; the
     * count belongs to the factory, so two factories with one prefix both start at 1.
     */
    public static ThreadFactory numbered(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        AtomicInteger n = new AtomicInteger();
        return r -> daemon(r, prefix + "-" + n.incrementAndGet());
    }

    /** Starts one daemon thread named {@code name} running {@code task}, and returns it. */
    public static Thread start(String name, Runnable task) {
        Thread t = daemon(task, name);
        t.start();
        return t;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
