package io.agentbox.worker.build;

import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildFileChunk;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.protocol.v1.BuildLogEntry;
import io.agentbox.protocol.v1.BuiltLayer;
import io.agentbox.protocol.v1.TemplateBuildResult;
import io.agentbox.protocol.v1.TemplateBuildSpec;
import io.agentbox.protocol.v1.TemplateBuildStep;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.worker.image.unpack.Trees;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code BuildTemplate} call (template_build.proto): takes the spec and the COPY archives from the hub,
 * spools each archive to a file (bounded), runs the build on the {@link BuildService}'s executor and
 * streams log entries and the result back with the call's flow control (the build waits while the
 * hub is not reading). Cancelling the call interrupts the build; the spooled archives are removed
 * whatever the outcome.
 */
final class BuildCall implements StreamObserver<BuildInput> {
    private static final Logger log = LoggerFactory.getLogger(BuildCall.class);

    private final BuildService service;
    private final ServerCallStreamObserver<BuildEvent> out;
    private final Object lock = new Object();
    private BuildSpec spec;
    private Set<String> wanted;
    private final Map<String, Path> archives = new HashMap<>();
    private final Set<String> complete = new HashSet<>();
    private Path uploads;
    private String current;
    private OutputStream currentOut;
    private long bytes;
    private boolean started;
    private volatile boolean finished;
    /** Waits on {@code lock}, so a send holds the lock from the readiness check to its onNext. */
    private final ReadyGate gate = new ReadyGate(lock, () -> finished);
    private volatile Future<?> build;
    private volatile boolean running;
    private long lines;

    BuildCall(BuildService service, StreamObserver<BuildEvent> out) {
        this.service = service;
        this.out = (ServerCallStreamObserver<BuildEvent>) out;
        this.out.setOnReadyHandler(gate::signal);
        this.out.setOnCancelHandler(this::cancelled);
    }

    @Override
    public void onNext(BuildInput in) {
        if (finished) {
            return;
        }
        try {
            switch (in.getInputCase()) {
                case SPEC -> spec(in.getSpec());
                case FILE -> file(in.getFile());
                case FILES_DONE -> start();
                default -> throw invalid("a build input needs spec, file or files_done");
            }
        } catch (StatusRuntimeException e) {
            fail(e);
        } catch (IOException e) {
            fail(Status.UNAVAILABLE.withDescription("cannot spool the build's files: " + e.getMessage()).asRuntimeException());
        }
    }

    private void spec(TemplateBuildSpec s) throws IOException {
        if (spec != null) {
            throw invalid("the build spec was sent twice");
        }
        if (s.getBuildId().isEmpty() || !s.getBuildId().matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")) {
            throw invalid("build_id '" + s.getBuildId() + "' must be 1-128 letters, digits, '_', '.', '-'");
        }
        List<String> refs = new ArrayList<>(List.of(s.getImageReference()));
        if (!s.getBaseImage().isEmpty()) {
            refs.add(s.getBaseImage());
        }
        for (String ref : refs) {
            try {
                ImageReference.parse(ref);
            } catch (IllegalArgumentException e) {
                throw invalid("image reference '" + ref + "': " + e.getMessage());
            }
        }
        if (s.getStepsCount() > BuildStep.MAX_STEPS) {
            throw invalid("a build has at most " + BuildStep.MAX_STEPS + " steps, this one " + s.getStepsCount());
        }
        List<BuildStep> steps = new ArrayList<>();
        wanted = new HashSet<>();
        for (TemplateBuildStep step : s.getStepsList()) {
            BuildStep b = new BuildStep(step.getType(), step.getArgsList(), step.getForce(), step.getFilesHash());
            steps.add(b);
            if (!b.filesHash().isEmpty() && BuildStep.FILES_HASH.matcher(b.filesHash()).matches()) {
                wanted.add(b.filesHash());
            }
        }
        spec = new BuildSpec(s.getBuildId(), s.getImageReference(), s.getBaseImage(), s.getFromTemplate(), steps,
                s.getStartCmd(), s.getReadyCmd(), s.getForce(), s.getCpuCount(), s.getMemoryMb(), s.getDiskSizeMb());
        uploads = service.uploadDir(s.getBuildId());
    }

    private void file(BuildFileChunk chunk) throws IOException {
        if (spec == null || started) {
            throw invalid(spec == null ? "file chunks before the spec" : "file chunks after files_done");
        }
        String hash = chunk.getFilesHash();
        if (!wanted.contains(hash)) {
            throw invalid("no COPY step of the spec names the files hash '" + hash + "'");
        }
        if (complete.contains(hash)) {
            throw invalid("the files " + hash + " were sent already");
        }
        if (chunk.getData().size() > BuildService.MAX_CHUNK_BYTES) {
            throw invalid("a file chunk holds at most " + BuildService.MAX_CHUNK_BYTES + " bytes, this one " + chunk.getData().size());
        }
        if (!hash.equals(current)) {
            if (current != null) {
                throw invalid("the files " + current + " did not end (last) before " + hash + " began");
            }
            current = hash;
            Path file = uploads.resolve(hash);
            archives.put(hash, file);
            currentOut = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }
        bytes += chunk.getData().size();
        if (bytes > service.maxArchiveBytes()) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("the build's files pass the worker's limit of "
                    + service.maxArchiveBytes() + " bytes").asRuntimeException();
        }
        chunk.getData().writeTo(currentOut);
        if (chunk.getLast()) {
            currentOut.close();
            currentOut = null;
            complete.add(hash);
            current = null;
        }
    }

    private void start() {
        if (spec == null || started) {
            throw invalid(spec == null ? "files_done before the spec" : "files_done sent twice");
        }
        if (current != null) {
            throw invalid("the files " + current + " did not end (last) before files_done");
        }
        started = true;
        Map<String, Path> ready = new HashMap<>();
        complete.forEach(h -> ready.put(h, archives.get(h)));
        try {
            build = service.submit(() -> run(ready));
        } catch (RejectedExecutionException e) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("this worker has " + BuildService.MAX_QUEUED
                    + " builds waiting already; try again later").asRuntimeException();
        }
    }

    private void run(Map<String, Path> ready) {
        running = true;
        TemplateBuildResult result;
        try {
            TemplateBuilder.Result r = service.builder().build(spec, ready, this::line);
            TemplateBuildResult.Builder b = TemplateBuildResult.newBuilder().setOk(true).setImageReference(spec.reference())
                    .setManifestDigest(r.image().manifestDigest()).setConfigDigest(r.image().configDigest())
                    .setUser(r.user()).setWorkdir(r.workdir()).setStepsRun(r.stepsRun()).setStepsCached(r.stepsCached());
            for (StoredImage.Layer l : r.image().layers()) {
                b.addLayers(BuiltLayer.newBuilder().setDigest(l.digest()).setSize(l.size()).setMediaType(l.mediaType())
                        .setDiffId(l.diffId()));
            }
            result = b.build();
        } catch (BuildFailure f) {
            line("error", f.step(), f.getMessage());
            result = TemplateBuildResult.newBuilder().setOk(false).setErrorMessage(f.getMessage()).setErrorStep(f.step()).build();
        } catch (InterruptedException e) {
            log.info("build {} cancelled", spec.buildId());
            cleanUp();
            return;
        } catch (RuntimeException e) {
            log.warn("build {} failed", spec.buildId(), e);
            result = TemplateBuildResult.newBuilder().setOk(false).setErrorMessage("the worker failed while building: " + e)
                    .build();
        }
        cleanUp();
        send(BuildEvent.newBuilder().setResult(result).build());
        synchronized (lock) {
            if (!finished) {
                finished = true;
                out.onCompleted();
            }
        }
    }

    /** A build log line, sent when the call can take it (the build waits meanwhile). */
    private void line(String level, String step, String message) {
        long n;
        synchronized (lock) {
            n = ++lines;
        }
        if (n > BuildService.MAX_LOG_LINES) {
            if (n == BuildService.MAX_LOG_LINES + 1) {
                message = "… the build log passed " + BuildService.MAX_LOG_LINES + " lines; later lines are left out";
                level = "warn";
            } else {
                return;
            }
        }
        String m = message.length() > BuildLog.MAX_LINE_CHARS ? message.substring(0, BuildLog.MAX_LINE_CHARS) : message;
        send(BuildEvent.newBuilder().setLog(BuildLogEntry.newBuilder().setTimestampMs(System.currentTimeMillis())
                .setLevel(level).setStep(step == null ? "" : step).setMessage(m)).build());
    }

    private void send(BuildEvent event) {
        synchronized (lock) {
            try {
                if (gate.awaitReady(out)) {
                    out.onNext(event);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void fail(StatusRuntimeException e) {
        synchronized (lock) {
            if (finished) {
                return;
            }
            finished = true;
        }
        cleanUp();
        out.onError(e);
    }

    private void cancelled() {
        synchronized (lock) {
            finished = true;
            lock.notifyAll();
        }
        Future<?> b = build;
        if (b != null) {
            b.cancel(true);
        }
        if (!running) {
            cleanUp(); // a running build removes its files itself once it stopped reading them
        }
    }

    @Override
    public void onError(Throwable t) {
        cancelled();
    }

    @Override
    public void onCompleted() {
        if (!started && !finished) {
            fail(invalid("the input ended before files_done"));
        }
    }

    private synchronized void cleanUp() {
        try {
            if (currentOut != null) {
                currentOut.close();
                currentOut = null;
            }
        } catch (IOException e) {
            // removed below
        }
        if (uploads != null) {
            try {
                Trees.deleteRecursively(uploads);
            } catch (IOException e) {
                log.warn("cannot remove the build's files {}: {}", uploads, e.toString());
            }
        }
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
