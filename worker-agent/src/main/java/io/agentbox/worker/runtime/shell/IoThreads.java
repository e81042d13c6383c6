package io.agentbox.worker.runtime.shell;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads that drain child-process pipes (each drain ends at the pipe's EOF). */
final class IoThreads {
    private static final AtomicInteger N = new AtomicInteger();
    static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sandbox-io-" + N.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private IoThreads() {}
}
