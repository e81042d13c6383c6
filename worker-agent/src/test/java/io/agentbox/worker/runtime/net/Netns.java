package io.agentbox.worker.runtime.net;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs code with its sockets inside another network namespace: a fresh thread joins the namespace
 * with setns(2) (which moves only the calling thread) and runs it; a socket stays in the
 * namespace it was created in, so a ServerSocket made here accepts there from any thread.
 */
final class Netns {
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int CLONE_NEWNET = 0x40000000;

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags) throws LastErrorException;

        int setns(int fd, int nstype) throws LastErrorException;

        int close(int fd) throws LastErrorException;
    }

    private Netns() {
    }

    /** The namespace file of a process's network namespace. */
    static Path of(long pid) {
        return Path.of("/proc", Long.toString(pid), "ns", "net");
    }

    /** Runs {@code body} on a thread inside the namespace at {@code nsFile}; at most 30 s. */
    static <T> T call(Path nsFile, Callable<T> body) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                int fd = LibC.INSTANCE.open(nsFile.toString(), O_RDONLY | O_CLOEXEC);
                try {
                    LibC.INSTANCE.setns(fd, CLONE_NEWNET);
                } finally {
                    LibC.INSTANCE.close(fd);
                }
                result.complete(body.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "netns " + nsFile);
        t.setDaemon(true);
        t.start();
        try {
            return result.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        } catch (TimeoutException e) {
            t.interrupt();
            throw new AssertionError("code in network namespace " + nsFile + " did not finish in 30 s", e);
        }
    }
}
