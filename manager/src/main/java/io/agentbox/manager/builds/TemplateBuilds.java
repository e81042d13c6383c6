package io.agentbox.manager.builds;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.manager.store.StoreException;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.BuiltTemplate;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.manager.store.TemplateStore;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateBuildSpec;
import io.agentbox.wsproxy.blobs.BlobStore;
import io.grpc.Channel;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's side of {@code Template.build} (docs/e2b-wire.md#template-builds; docs/template-builds.md):
 * requests, the trigger that runs a build on a worker cluster over {@code BuildTemplate}
 * ({@link BuildRun}), and the templates a ready build becomes.
 *
 * <p>A ready build is served as a hub template named {@code built-<build id>} ({@link #syncedName})
 * whose image is the build's image in the building worker's store, targeted at the building cluster
 * and synced like any template. A build is reported {@code ready} only once that template's pool
 * reports its image ready there (a create then claims a warm sandbox or starts one), so {@code Sandbox.create('<name>:<tag>')} right after
 * {@code Template.build} resolves succeeds (docs/e2b-wire.md#build-status-and-logs). Tags point at builds ({@link TemplateBuildStore});
 * a ready build no tag points at any more loses its hub template ({@link #reconcile}).
 *
 * <p>Where layers live: the built image stays in the building worker's store, so a built template
 * runs on the cluster that built it (docs/template-builds.md, "Where built layers live").
 */
public final class TemplateBuilds implements AutoCloseable {
    /** Prefix of the hub templates that serve ready builds. */
    public static final String SYNCED_PREFIX = TemplateStore.BUILT_PREFIX;
    /** Pseudo-registry of built images (no registry answers it: the hub keeps their blobs). */
    public static final String IMAGE_REGISTRY = ImageReference.BUILDS_REGISTRY;
    /** Warm sandboxes of a built template on its cluster. */
    public static final int POOL_SIZE = 1;
    /** How long a ready build waits for its template's pool before it counts as failed. */
    static final Duration POOL_WAIT = Duration.ofMinutes(5);
    /** Builds the hub drives at once (each mostly waits on its worker). */
    static final int MAX_RUNNING = 16;
    private static final Logger log = LoggerFactory.getLogger(TemplateBuilds.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The last capacity report of a template's pool on a cluster (sync.proto PoolCapacity), if any. */
    @FunctionalInterface
    public interface PoolReports {
        Optional<PoolCapacity> pool(String clusterId, String template);
    }

    private final TemplateBuildStore builds;
    private final TemplateStore templates;
    private final ClusterRouter router;
    private final PoolReports reports;
    private final TemplateFiles files;
    private final UploadTokens uploads;
    /** The hub's copies of built images' blobs; null: built images stay on the building cluster only. */
    private final BuiltBlobs blobs;
    /** Held while blobs are collected, and while a copied image's pin is released after its record exists. */
    private final Object blobRecords = new Object();
    /** Copies of snapshots' images to the hub ({@link SnapshotCopies}): a few at a time, each mostly waits on its worker. */
    private final ThreadPoolExecutor snapshotCopies = new ThreadPoolExecutor(
            SnapshotCopies.THREADS, SnapshotCopies.THREADS, 60, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(SnapshotCopies.MAX_QUEUED), DaemonThreads.numbered("snapshot-copy"));
    /** Builds waiting for one of the hub's {@link #MAX_RUNNING} threads. */
    static final int MAX_QUEUED = 256;
    private final ThreadPoolExecutor runs = new ThreadPoolExecutor(MAX_RUNNING,
            MAX_RUNNING, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(MAX_QUEUED), DaemonThreads.numbered("template-build-run"));

    /** {@code blobs} (null: none) keeps built images' blobs so they run on every cluster. */
    public TemplateBuilds(TemplateBuildStore builds, TemplateStore templates, ClusterRouter router, PoolReports reports,
                          TemplateFiles files, UploadTokens uploads, BlobStore blobs) {
        this.blobs = blobs == null ? null : new BuiltBlobs(blobs);
        this.builds = builds;
        this.templates = templates;
        this.router = router;
        this.reports = reports;
        this.files = files;
        this.uploads = uploads;
        failInterrupted();
    }

    /** Secret name (hub store) of the upload links' HMAC key. */
    public static final String UPLOAD_SECRET = "template-upload-secret";

    /**
     * The builds of a hub: records in {@code store}, uploaded archives under
     * {@code <dataDir>/template-files} (at most {@code maxUploadBytes} each).
     */
    public static TemplateBuilds open(HubStore store, Path dataDir, ClusterRouter router,
                                      PoolReports reports, long maxUploadBytes) throws IOException {
        return open(store, dataDir, router, reports, maxUploadBytes, BlobStore.open(blobDir(dataDir)));
    }

    /** As above with the hub's blob store (the one its sync service serves to workers). */
    public static TemplateBuilds open(HubStore store, Path dataDir, ClusterRouter router,
                                      PoolReports reports, long maxUploadBytes, BlobStore blobs) throws IOException {
        return new TemplateBuilds(store.templateBuildStore(), store.templateStore(), router, reports,
                new TemplateFiles(dataDir.resolve("template-files"), maxUploadBytes), new UploadTokens(store.secret(UPLOAD_SECRET)),
                blobs);
    }

    /** Where a hub with data directory {@code dataDir} keeps image blobs. */
    public static Path blobDir(Path dataDir) {
        return dataDir.resolve("blobs");
    }

    public TemplateBuildStore store() {
        return builds;
    }

    public TemplateFiles files() {
        return files;
    }

    public UploadTokens uploads() {
        return uploads;
    }

    /** The hub template serving a ready build. */
    public static String syncedName(String buildId) {
        return SYNCED_PREFIX + buildId;
    }

    /** The image reference a build records its result under. */
    public static String imageReference(String templateId, String buildId) {
        return IMAGE_REGISTRY + "/" + templateId + ":" + buildId;
    }

    /** A new E2B-style template id: 20 lowercase letters and digits. */
    public static String newTemplateId() {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder b = new StringBuilder(20);
        b.append(alphabet.charAt(RANDOM.nextInt(26))); // a letter first: never mistaken for a number
        for (int i = 1; i < 20; i++) {
            b.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    /** The hub template of a ready build, once synced. */
    public Optional<Template> served(Build b) {
        if (!TemplateBuildStore.READY.equals(b.status())) {
            return Optional.empty();
        }
        return templates.get(syncedName(b.buildId())).map(TemplateRecord::spec);
    }

    /**
     * Starts a waiting build (E2B's trigger, docs/e2b-wire.md#build-trigger): checks the spec, resolves its base, picks a
     * cluster, marks the build {@code building} and runs it in the background.
     *
     * @param base how the base resolved: the image and whether it is a built template, and the cluster
     *     that holds it (null = any)
     * @throws ApiException 400 bad spec or not waiting, 503 no cluster connected
     */
    public Build start(BuiltTemplate template, Build build, BuildRequest request, Base base) {
        if (!TemplateBuildStore.WAITING.equals(build.status())) {
            throw ApiException.e2b(400, "build is not in waiting state (it is " + build.status() + ")");
        }
        // the hub holds a built base's blobs: any cluster can fetch it; its own cluster has it already
        String cluster = pickCluster(base.clusterId(), blobs != null && BuiltBlobs.manifestOf(base.image()).isPresent());
        if (cluster == null) {
            throw ApiException.e2b(503, "no worker cluster is connected to run the build; start a worker and retry");
        }
        TemplateBuildSpec spec = TemplateBuildSpec.newBuilder().setBuildId(build.buildId())
                .setImageReference(imageReference(template.templateId(), build.buildId())).setBaseImage(base.image())
                .setFromTemplate(base.fromTemplate()).addAllSteps(request.steps()).setStartCmd(request.startCmd())
                .setReadyCmd(request.readyCmd()).setForce(request.force()).setCpuCount(Math.max(0, build.cpuCount()))
                .setMemoryMb(Math.max(0, build.memoryMb())).build();
        Build started;
        try {
            started = builds.start(template.templateId(), build.buildId(), cluster);
        } catch (StoreException e) {
            throw ApiException.e2b(e.reason() == StoreException.Reason.NOT_FOUND ? 404 : 400, e.getMessage());
        }
        try {
            runs.execute(() -> run(started, template, spec, request.filesHashes()));
        } catch (RejectedExecutionException e) {
            fail(started, "the hub has " + MAX_QUEUED + " builds waiting already", null);
            throw ApiException.e2b(503, "the hub has " + MAX_QUEUED + " builds waiting already; retry later");
        }
        return started;
    }

    /**
     * What a build starts from.
     *
     * @param image        image reference, empty for the runtime's built-in root ({@code base})
     * @param fromTemplate whether it is a built template (its USER, WORKDIR and ENV carry on)
     * @param clusterId    the cluster holding the image (a built template's), or null for any
     */
    public record Base(String image, boolean fromTemplate, String clusterId) {}

    /**
     * The base of {@code fromImage}: the reference normalised.
     *
     * @throws ApiException 400 for a malformed reference
     */
    public static Base imageBase(String fromImage) {
        try {
            return new Base(ImageReference.parse(fromImage).toString(), false, null);
        } catch (IllegalArgumentException e) {
            throw ApiException.e2b(400, "fromImage '" + fromImage + "': " + e.getMessage());
        }
    }

    private String pickCluster(String preferred, boolean anyWillDo) {
        List<String> connected = new ArrayList<>(router.connectedClusters());
        if (preferred != null && (connected.contains(preferred) || !anyWillDo)) {
            return connected.contains(preferred) ? preferred : null;
        }
        if (connected.isEmpty()) {
            return null;
        }
        return connected.get(RANDOM.nextInt(connected.size()));
    }

    private void run(Build build, BuiltTemplate template, TemplateBuildSpec spec, List<String> hashes) {
        String cluster = build.clusterId();
        try {
            Channel channel = router.channel(cluster);
            if (channel == null) {
                fail(build, "the worker cluster '" + cluster + "' disconnected before the build began", null);
                return;
            }
            List<Path> archives = new ArrayList<>();
            List<String> sent = new ArrayList<>();
            for (String h : hashes) {
                Optional<Path> f = files.file(template.templateId(), h);
                if (f.isPresent()) { // a missing one fails its COPY step on the worker, naming it
                    archives.add(f.get());
                    sent.add(h);
                }
            }
            BuildRun.Outcome outcome = new BuildRun(channel, builds, build.buildId()).run(spec, sent, archives);
            if (!outcome.ok()) {
                fail(build, outcome.errorMessage(), outcome.errorStep());
                return;
            }
            if (blobs == null) {
                serve(build, template, outcome.imageReference(), List.of(build.clusterId()));
                return;
            }
            copyAndServe(build, template, channel, outcome);
        } catch (RuntimeException e) {
            log.warn("build {} of template {} failed on the hub", build.buildId(), template.templateId(), e);
            fail(build, "the hub failed while running the build: " + e, null);
        }
    }

    /**
     * Copies the built image's blobs from the building worker to the hub, then serves it on every
     * cluster under its reference pinned to the manifest digest (other workers fetch it from the
     * hub by that digest). The build fails when the copy fails.
     */
    private void copyAndServe(Build build, BuiltTemplate template, Channel channel, BuildRun.Outcome outcome) {
        String image;
        try {
            image = ImageReference.parse(outcome.imageReference()).withDigest(outcome.manifestDigest()).toString();
        } catch (IllegalArgumentException e) {
            fail(build, "the worker reported a malformed image (" + outcome.imageReference() + ", manifest "
                    + outcome.manifestDigest() + "): " + e.getMessage(), "finalize");
            return;
        }
        log(build, "info", "finalize", "Copying the image's blobs to the hub");
        BlobStore.Pin pin;
        try {
            pin = blobs.copy(channel, outcome.manifestDigest(), line -> log(build, "debug", "finalize", line));
        } catch (IOException | RuntimeException e) {
            log.warn("build {}: copying its blobs to the hub failed", build.buildId(), e);
            fail(build, "copying the built image to the hub failed: " + e.getMessage(), "finalize");
            return;
        }
        try {
            serve(build, template, image, List.of());
        } finally {
            releaseRecorded(pin); // the build's record names the image now (or it failed)
        }
    }

    /** Makes the built image a synced template on {@code clusters} (empty: all), waits for its pool, then marks the build ready. */
    private void serve(Build build, BuiltTemplate template, String image, List<String> clusters) {
        String name = syncedName(build.buildId());
        Template spec = Template.newBuilder().setName(name).setImage(image).setPoolSize(POOL_SIZE)
                .setCpuCount(Math.max(0, build.cpuCount())).setMemoryMb(Math.max(0, build.memoryMb())).build();
        try {
            templates.create(spec, clusters);
        } catch (StoreException e) {
            if (e.reason() != StoreException.Reason.CONFLICT) {
                throw e;
            }
            templates.update(spec, clusters, null);
        }
        log(build, "info", "finalize", "Waiting for the template's warm pool on cluster " + build.clusterId());
        String notReady = awaitPool(build.clusterId(), name, image);
        if (notReady != null) {
            fail(build, notReady, "finalize");
            return;
        }
        // the last entry before the status: a client that reads the status, then the log, has every line
        log(build, "info", "finalize", "Template " + template.alias() + " is ready (build " + build.buildId() + ")");
        try {
            builds.finish(build.buildId(), image);
        } catch (StoreException e) { // deleted meanwhile
            dropSynced(build.buildId());
            return;
        }
        reconcile(template.templateId());
    }

    /** Null once the pool reports its image ready (creates then succeed, warm or cold); else why not (after {@link #POOL_WAIT}, or at once on an error). */
    private String awaitPool(String cluster, String name, String image) {
        long deadline = System.nanoTime() + POOL_WAIT.toNanos();
        String last = "no report of its pool from cluster " + cluster + " yet";
        while (System.nanoTime() < deadline) {
            Optional<PoolCapacity> p = reports.pool(cluster, name);
            if (p.isPresent()) {
                String status = PoolReadiness.status(p.get());
                if (PoolReadiness.ERROR.equals(status)) {
                    return "the built template cannot start on cluster " + cluster + ": " + p.get().getStatusMessage();
                }
                if (PoolReadiness.isReady(p.get())) { // a create claims an idle one or starts one
                    return null;
                }
                last = "its pool on cluster " + cluster + " has " + p.get().getIdle() + " idle sandboxes, status "
                        + status + (p.get().getStatusMessage().isEmpty() ? "" : ": " + p.get().getStatusMessage());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "the hub stopped while waiting for the built template's pool";
            }
        }
        return "the built template " + image + " was not ready to serve sandboxes within " + POOL_WAIT.toMinutes()
                + " minutes: " + last + " (a start command that never passes its ready command?)";
    }

    private void fail(Build build, String message, String step) {
        try {
            builds.fail(build.buildId(), message == null || message.isEmpty() ? "Unknown error" : message, step);
        } catch (StoreException e) {
            log.info("build {} ended after it was deleted or finished: {}", build.buildId(), e.getMessage());
        }
        dropSynced(build.buildId());
    }

    private void log(Build build, String level, String step, String message) {
        try {
            builds.appendLogs(build.buildId(), List.of(new TemplateBuildStore.LogEntry(System.currentTimeMillis(), level, step,
                    message)));
        } catch (StoreException e) {
            // deleted meanwhile
        }
    }

    /**
     * Keeps the hub templates of {@code templateId}'s builds in line with its tags: a ready build
     * no tag points at loses its template (its warm pool drains).
     */
    public synchronized void reconcile(String templateId) {
        Set<String> tagged = new HashSet<>();
        builds.tags(templateId).forEach(t -> tagged.add(t.buildId()));
        for (Build b : builds.builds(templateId)) {
            if (TemplateBuildStore.READY.equals(b.status()) && !tagged.contains(b.buildId())) {
                dropSynced(b.buildId());
            }
        }
    }

    /** Deletes a built template: its hub templates, uploaded files and records. */
    public synchronized boolean delete(String templateId) {
        List<Build> all = builds.builds(templateId);
        boolean deleted = builds.delete(templateId);
        all.forEach(b -> dropSynced(b.buildId()));
        try {
            files.deleteTemplate(templateId);
        } catch (IOException e) {
            log.warn("cannot remove the uploaded files of template {}: {}", templateId, e.toString());
        }
        collectBlobs();
        return deleted;
    }

    /**
     * The copies of {@code snapshots}' images to the hub, so they run on every cluster; null when
     * this hub keeps no blobs (snapshots then stay on the cluster that made them).
     */
    public SnapshotCopies snapshotCopies(SnapshotStore snapshots) {
        return blobs == null ? null : new SnapshotCopies(this, blobs, router, snapshots, snapshotCopies);
    }

    /**
     * Releases the pin of a copied image once the record that names it exists (or never will), never
     * in the middle of a collection: one that read the records before would remove the image's blobs.
     */
    void releaseRecorded(BlobStore.Pin pin) {
        synchronized (blobRecords) {
            pin.close();
        }
    }

    /**
     * Removes the hub's blobs that no ready build and no template needs any more (after a template
     * or snapshot is deleted); blobs of a copy under way are pinned. Failures are logged: the next
     * collection retries.
     */
    public void collectBlobs() {
        if (blobs == null) {
            return;
        }
        synchronized (blobRecords) {
            try {
                // a set: a ready build's template names its image too, and each image's manifest is read once
                Set<String> images = new HashSet<>(builds.readyImages());
                templates.list().forEach(t -> images.add(t.spec().getImage())); // snapshots' copies among them
                BlobStore.Removed r = blobs.collect(images);
                if (r.blobs() > 0) {
                    log.info("hub blobs: removed {} blob(s), {} MB no built template or snapshot uses", r.blobs(),
                            r.bytes() / 1_000_000);
                }
            } catch (IOException | RuntimeException e) {
                log.warn("collecting the hub's blobs failed: {}", e.toString());
            }
        }
    }

    private void dropSynced(String buildId) {
        try {
            templates.delete(syncedName(buildId), null);
        } catch (StoreException e) {
            // never synced, or gone already
        }
    }

    /** Builds a previous hub left running can never finish: they fail, saying why. */
    private void failInterrupted() {
        for (Build b : builds.building()) {
            try {
                builds.fail(b.buildId(), "the hub restarted while the build was " + b.status(), null);
            } catch (StoreException e) {
                // ended meanwhile
            }
        }
    }

    @Override
    public void close() {
        runs.shutdownNow();
        snapshotCopies.shutdownNow();
    }
}
