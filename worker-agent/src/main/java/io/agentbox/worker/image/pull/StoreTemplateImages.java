package io.agentbox.worker.image.pull;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.ResolvedImage;
import io.agentbox.worker.metrics.WorkerMeters;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.image.Preparation;
import io.agentbox.worker.image.RegistryCredentials;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TemplateImages;
import io.agentbox.worker.image.registry.RegistryClient;
import io.agentbox.worker.image.registry.RegistryConfig;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.PullListener;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.protocol.SandboxTimeouts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.LongConsumer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Templates' images from this worker's {@link ImageStore}: an image already in the store (pulled
 * before, or loaded with {@code agentbox image import}) is ready at once, as Docker's
 * "if not present" pull policy does, so a moved tag is not followed; anything else is pulled from
 * its registry with a {@link RegistryClient} made for that pull from the worker's
 * {@link RegistrySettings} and the credentials pushed from the hub at that moment, or, for an image
 * of a template build ({@link ImageReference#BUILDS_REGISTRY}), from the hub's blobs
 * ({@link #builtImagesFrom}). Preparations
 * of one reference share one pull. When the last template using an image lets it go, the image
 * (and the layers no kept image needs) is garbage-collected once the longest a sandbox may live
 * ({@link SandboxTimeouts#MAX_SECONDS}) has passed, so sandboxes still running on it (claimed
 * before their template went away) keep their layers; a worker that stops forgets what it was
 * about to collect, so a restart never costs a pull. Images no template ever asked for (imports
 * waiting for their template) are kept.
 */
public final class StoreTemplateImages implements TemplateImages, AutoCloseable {
    /** Pulls at a time; each pull fetches its layers one after another. */
    static final int PULL_THREADS = 2;
    private static final Logger log = LoggerFactory.getLogger(StoreTemplateImages.class);

    private final ImageStore store;
    private final WorkerMeters meters;
    private final RegistrySettings settings;
    private final RegistryCredentials credentials;
    /** Source of built images (the hub); null until the worker's tunnel exists. */
    private volatile ImageSource builtImages;
    private final ExecutorService pulls = Executors.newFixedThreadPool(PULL_THREADS, DaemonThreads.named("image-pull"));
    /** Guarded by this: pulls under way, and how many preparations use each reference. */
    private final Map<String, Pull> inFlight = new HashMap<>();
    private final Map<String, Integer> users = new HashMap<>();
    /** References a template used and no template uses now, with when it let them go (ms). */
    private final Map<String, Long> released = new HashMap<>();
    /** How long a released image is kept before it may be collected. */
    private final Duration grace;
    private final ScheduledExecutorService collector = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("image-gc"));

    /** Released images are kept for the longest sandbox lifetime plus 10 minutes. */
    public StoreTemplateImages(ImageStore store, RegistrySettings settings, RegistryCredentials credentials) {
        this(store, settings, credentials, WorkerMeters.none());
    }

    /** As above; {@code meters} counts pulls and their bytes. */
    public StoreTemplateImages(ImageStore store, RegistrySettings settings, RegistryCredentials credentials,
                               WorkerMeters meters) {
        this(store, settings, credentials, Duration.ofSeconds(SandboxTimeouts.MAX_SECONDS).plusMinutes(10), meters);
    }

    /** @param grace how long an image no template uses is kept (tests use a short one) */
    public StoreTemplateImages(ImageStore store, RegistrySettings settings, RegistryCredentials credentials,
                               Duration grace) {
        this(store, settings, credentials, grace, WorkerMeters.none());
    }

    private StoreTemplateImages(ImageStore store, RegistrySettings settings, RegistryCredentials credentials,
                                Duration grace, WorkerMeters meters) {
        this.meters = meters;
        meters.pullSources();
        this.store = store;
        this.settings = settings;
        this.credentials = credentials;
        this.grace = grace;
    }

    public ImageStore store() {
        return store;
    }

    @Override
    public Preparation prepare(Template template) {
        String reference = template.getImage();
        if (!template.getSnapshot().isEmpty()) {
            Preparation local = prepareSnapshot(template.getSnapshot());
            if (reference.isEmpty() || local.state().isReady()) {
                return local;
            }
            // a snapshot made on another cluster comes with the hub's copy of its image: pulled from the hub
        }
        if (reference.isEmpty()) {
            return Preparation.ready(Optional.empty());
        }
        Pull pull;
        synchronized (this) {
            users.merge(reference, 1, Integer::sum);
            released.remove(reference);
            pull = inFlight.get(reference);
            if (pull == null) {
                pull = new Pull(reference);
                inFlight.put(reference, pull);
                Pull started = pull;
                pulls.execute(started::run);
            }
        }
        return new Use(reference, pull);
    }

    /**
     * A snapshot's image is in the store already (made here) or nowhere: ready at once, or failed
     * naming the snapshot (a template synced to a worker that did not make it); {@link #prepare}
     * then pulls the hub's copy when the template names one. One read of the store either way.
     */
    private Preparation prepareSnapshot(String snapshotId) {
        try {
            Optional<StoredImage> image = store.findSnapshot(snapshotId);
            return image.isPresent() ? Preparation.ready(Optional.of(image.get().toSandboxImage(snapshotId)))
                    : Preparation.failed("snapshot " + snapshotId + " is not in this worker's image store (it lives on "
                            + "the worker that made it until the hub holds a copy)");
        } catch (IOException e) {
            return Preparation.failed("snapshot " + snapshotId + ": " + e.getMessage());
        }
    }

    /**
     * The image {@code reference} names for a template build's base: from the store when it is
     * there, else pulled now (with the credentials the hub pushed). The image is kept like an
     * imported one (no template released it).
     *
     * @throws IOException naming the image and the cause
     */
    public StoredImage image(String reference) throws IOException {
        Optional<StoredImage> have = store.find(reference);
        if (have.isPresent()) {
            return have.get();
        }
        ImageReference ref;
        try {
            ref = ImageReference.parse(reference);
        } catch (IllegalArgumentException e) {
            throw new IOException("image " + reference + ": " + e.getMessage(), e);
        }
        return pull(ref, p -> { });
    }

    /**
     * Where images under {@link ImageReference#BUILDS_REGISTRY} come from (the hub's blobs over the
     * tunnel, {@link HubImageSource}); until this is called such an image that is not in the store
     * fails to pull, naming why.
     */
    public void builtImagesFrom(ImageSource source) {
        this.builtImages = source;
    }

    /** Pulls {@code ref} from its registry, or from the hub for a built image. */
    private StoredImage pull(ImageReference ref, PullListener listener) throws IOException {
        if (ImageReference.BUILDS_REGISTRY.equals(ref.registry())) {
            ImageSource hub = builtImages;
            if (hub == null) {
                throw new IOException("image " + ref + " is a built template's image, not in this worker's store, and this "
                        + "worker has no hub to fetch it from");
            }
            return counted(ref, hub, "hub", listener);
        }
        try (RegistryClient client = client()) {
            return counted(ref, client, "registry", listener);
        }
    }

    /** A pull from {@code source}, its blob bytes and its outcome counted under {@code label}. */
    private StoredImage counted(ImageReference ref, ImageSource source, String label, PullListener listener)
            throws IOException {
        ImageSource counting = new ImageSource() {
            @Override
            public ResolvedImage resolve(ImageReference r) throws IOException {
                return source.resolve(r);
            }

            @Override
            public void fetchBlob(ImageReference r, Descriptor blob, Path target, LongConsumer progress) throws IOException {
                source.fetchBlob(r, blob, target, n -> {
                    meters.pullBytes(label, n);
                    progress.accept(n);
                });
            }
        };
        boolean ok = false;
        try {
            StoredImage image = store.pull(ref, counting, listener);
            ok = true;
            return image;
        } finally {
            meters.pulled(label, ok);
        }
    }

    private synchronized void release(String reference) {
        int left = users.merge(reference, -1, Integer::sum);
        if (left <= 0) {
            users.remove(reference);
            released.put(reference, System.currentTimeMillis());
            scheduleCollection(grace);
        }
    }

    private void scheduleCollection(Duration after) {
        if (!collector.isShutdown()) {
            collector.schedule(this::collectGarbage, after.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void collectGarbage() {
        try {
            Set<String> collected = new HashSet<>();
            long due = System.currentTimeMillis() - grace.toMillis();
            synchronized (this) {
                for (Map.Entry<String, Long> r : released.entrySet()) {
                    if (r.getValue() <= due) {
                        collected.add(r.getKey());
                    }
                }
                // a pull still finishing keeps its image; its end schedules another collection
                collected.removeAll(users.keySet());
                collected.removeAll(inFlight.keySet());
            }
            if (collected.isEmpty()) {
                return;
            }
            ImageStore.GcResult gc = store.gcReleased(collected);
            if (gc.images() > 0 || gc.layers() > 0) {
                log.info("image store: removed {} image(s), {} layer(s), {} MB no template uses", gc.images(), gc.layers(),
                        gc.bytes() / 1_000_000);
            }
            synchronized (this) {
                released.keySet().removeAll(collected);
            }
        } catch (IOException | RuntimeException e) {
            log.warn("image store garbage collection failed: {}", e.toString());
        }
    }

    private RegistryClient client() {
        Map<String, RegistryConfig.Credentials> auth = new HashMap<>();
        for (String registry : credentials.registries()) {
            credentials.lookup(registry).ifPresent(a -> auth.put(registry, new RegistryConfig.Credentials(a.username(), a.password())));
        }
        return new RegistryClient(RegistryConfig.defaults().withInsecure(settings.insecure()).withCredentials(auth));
    }

    /** Stops pulls and forgets pending collections (a restarted worker keeps every image). */
    @Override
    public void close() {
        collector.shutdownNow();
        pulls.shutdownNow();
    }

    /** One pull of one reference, shared by every preparation that asked for it meanwhile. */
    private final class Pull {
        final String reference;
        final CompletableFuture<SandboxImage> result = new CompletableFuture<>();
        volatile ImageState state = ImageState.pulling("resolving");

        Pull(String reference) {
            this.reference = reference;
        }

        void run() {
            SandboxImage pulled = null;
            IOException failure = null;
            try {
                Optional<StoredImage> have = store.find(reference);
                StoredImage image;
                if (have.isPresent()) {
                    image = have.get();
                } else {
                    ImageReference ref = ImageReference.parse(reference);
                    log.info("pulling image {}", reference);
                    image = pull(ref, p -> state = ImageState.pulling(p.message()));
                    log.info("pulled image {} ({} layers, {} MB)", reference, image.layers().size(), image.size() / 1_000_000);
                }
                pulled = image.toSandboxImage(reference);
                state = ImageState.READY;
            } catch (IOException | RuntimeException e) {
                String message = e.getMessage() != null && e.getMessage().contains(reference) ? e.getMessage()
                        : "image " + reference + ": " + e.getMessage();
                log.warn("image {} is not available: {}", reference, message);
                state = ImageState.error(message);
                failure = new IOException(message, e);
            }
            // leave inFlight before completing: a prepare woken by a failure must start a new pull, not join this one
            synchronized (StoreTemplateImages.this) {
                inFlight.remove(reference, this);
                if (released.containsKey(reference)) {
                    scheduleCollection(grace);
                }
            }
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(pulled);
            }
        }
    }

    /** One template's use of a pull. */
    private final class Use implements Preparation {
        private final String reference;
        private final Pull pull;
        private boolean cancelled;

        Use(String reference, Pull pull) {
            this.reference = reference;
            this.pull = pull;
        }

        @Override
        public ImageState state() {
            return pull.state;
        }

        @Override
        public CompletableFuture<Optional<SandboxImage>> result() {
            return pull.result.thenApply(Optional::of);
        }

        @Override
        public void cancel() {
            synchronized (this) {
                if (cancelled) {
                    return;
                }
                cancelled = true;
            }
            release(reference);
        }
    }
}
