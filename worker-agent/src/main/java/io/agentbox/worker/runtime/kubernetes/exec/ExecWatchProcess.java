package io.agentbox.worker.runtime.kubernetes.exec;

import io.fabric8.kubernetes.client.dsl.ExecWatch;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A pod exec seen as a {@link Process}, so the shell-based launch and file code of the worker
 * works unchanged. The exit code is the one the API server reports; an exec that ended without
 * one (connection lost) reports -1.
 */
final class ExecWatchProcess extends Process {
    private final ExecWatch watch;
    private final boolean stdin;
    private final CompletableFuture<Integer> exit;

    ExecWatchProcess(ExecWatch watch, boolean stdin) {
        this.watch = watch;
        this.stdin = stdin;
        this.exit = watch.exitCode().handle((code, error) -> code == null ? -1 : code);
    }

    @Override
    public OutputStream getOutputStream() {
        return stdin ? watch.getInput() : OutputStream.nullOutputStream();
    }

    @Override
    public InputStream getInputStream() {
        return watch.getOutput();
    }

    @Override
    public InputStream getErrorStream() {
        return watch.getError();
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            return exit.get();
        } catch (ExecutionException e) {
            return -1;
        }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            exit.get(timeout, unit);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true;
        }
    }

    @Override
    public int exitValue() {
        if (!exit.isDone()) {
            throw new IllegalThreadStateException("exec still running");
        }
        return exit.join();
    }

    @Override
    public boolean isAlive() {
        return !exit.isDone();
    }

    @Override
    public void destroy() {
        watch.close();
    }

    @Override
    public Process destroyForcibly() {
        watch.close();
        return this;
    }
}
