package io.agentbox.worker.runtime.shell;

import io.agentbox.mux.util.DaemonThreads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Daemon threads that drain child-process pipes (each drain ends at the pipe's EOF). */
final class IoThreads {
    static final ExecutorService POOL = Executors.newCachedThreadPool(DaemonThreads.numbered("sandbox-io"));

    private IoThreads() {}
}
