package io.agentbox.worker.build;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.worker.image.unpack.Trees;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker's side of {@code BuildTemplate} (template_build.proto): at most {@value #MAX_RUNNING} builds
 * run at once on this worker, {@value #MAX_QUEUED} more wait; the spooled COPY archives of a build
 * live under {@code <worker data>/builds/uploads/} until it ends.
 */
public final class BuildService implements AutoCloseable {
    public static final int MAX_RUNNING = 2;
    public static final int MAX_QUEUED = 8;
    /** Largest chunk of archive bytes in one input message. */
    public static final int MAX_CHUNK_BYTES = 1 << 20;
    /** Log lines sent per build; later ones are counted and dropped. */
    public static final long MAX_LOG_LINES = 100_000;
    /** Default limit of all COPY archives of one build. */
    public static final long DEFAULT_MAX_ARCHIVE_BYTES = 2L << 30;

    private final TemplateBuilder builder;
    private final Path uploads;
    private final long maxArchiveBytes;
    private final AtomicLong calls = new AtomicLong();
    private final ThreadPoolExecutor executor = new ThreadPoolExecutor(MAX_RUNNING, MAX_RUNNING, 60, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(MAX_QUEUED), DaemonThreads.numbered("template-build"));

    /** @param workerDataDir the worker's data directory (uploads are spooled below it) */
    public BuildService(TemplateBuilder builder, Path workerDataDir, long maxArchiveBytes) throws IOException {
        this.builder = builder;
        this.uploads = Files.createDirectories(workerDataDir.resolve("builds").resolve("uploads"));
        this.maxArchiveBytes = maxArchiveBytes;
        try (var s = Files.list(uploads)) {
            for (Path p : s.toList()) {
                Trees.deleteRecursively(p); // a previous worker's
            }
        }
    }

    /** Handles one call: returns the observer of the hub's input. */
    public StreamObserver<BuildInput> call(StreamObserver<BuildEvent> out) {
        return new BuildCall(this, out);
    }

    TemplateBuilder builder() {
        return builder;
    }

    long maxArchiveBytes() {
        return maxArchiveBytes;
    }

    Path uploadDir(String buildId) throws IOException {
        return Files.createDirectory(uploads.resolve(buildId + "-" + calls.incrementAndGet()));
    }

    Future<?> submit(Runnable build) {
        return executor.submit(build);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
