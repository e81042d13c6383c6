package io.agentbox.worker.pool;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.image.Preparation;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TemplateImages;
import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.PoolSignal;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxStarter;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The generic warm pool: idle sandboxes of one template, kept at {@code pool_size} by background
 * starts through the runtime's {@link SandboxStarter} (the {@link RuntimePool} of runtimes the
 * worker fills itself, see {@code PoolContext.warmPool}). Claims pop from an in-memory queue; a
 * sandbox leaves the pool exactly once (claimed or killed), so a killed sandbox is never handed
 * out again. Every live sandbox holds one slot of the host's limit ({@link WarmPoolHost}).
 *
 * <p>Claims: an idle sandbox at once; else one started on the claiming thread when the host has
 * a free slot, or when another pool has an idle sandbox to evict for it (idle warm sandboxes are
 * nobody's: they never hold a claim back, see {@link WarmPoolHost#evictIdleFor}); else the claim
 * waits on the pool's {@link PoolSignal}, which a sandbox becoming idle, a slot freeing anywhere
 * on the host, a new image or the pool's close bumps. Refills never evict.
 *
 * <p>Refills yield to claims: a sandbox start costs milliseconds of host CPU (forks, namespaces,
 * mounts), so starting one per claim while claims keep coming would slow every claim of a burst.
 * After a claim the refill waits until no claim came for {@link #REFILL_QUIET_MS}, unless the idle
 * sandboxes fell below a quarter of the pool size: then it starts at once.
 *
 * <p>Images: the pool starts nothing until its template's image is ready ({@link TemplateImages});
 * until then it reports the preparation's state (pulling with progress, or error) and claims
 * fail with UNAVAILABLE saying so. A failed preparation is retried after
 * {@link #PREPARE_MIN_BACKOFF_MS}, doubling up to {@link #PREPARE_MAX_BACKOFF_MS}. A template
 * update that changes the image drains the idle sandboxes and prepares the new image.
 */
final class WarmPool implements RuntimePool {
    static final long MIN_BACKOFF_MS = 500;
    static final long MAX_BACKOFF_MS = 30_000;
    /** Claim-free time after which a refill starts (see the class comment). */
    static final long REFILL_QUIET_MS = 20;
    /** First pause before preparing a failed image again; doubles per failure. */
    static final long PREPARE_MIN_BACKOFF_MS = 5_000;
    static final long PREPARE_MAX_BACKOFF_MS = 300_000;

    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);

    private final String clusterId;
    /** The runtime's start function. */
    private final SandboxStarter runtime;
    private final WarmPoolHost host;
    private final SlotLimit slots;
    private final Executor starter;
    private final ScheduledExecutorService timer;
    /** Bumped when a claim waiting here may get further (see the class comment). */
    private final PoolSignal signal = new PoolSignal();

    private final ConcurrentLinkedDeque<RuntimeSandbox> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger idleCount = new AtomicInteger();
    private final AtomicInteger starting = new AtomicInteger();
    /** Bumped when the template's sandbox shape changes; starts of an older generation are discarded. */
    private final AtomicInteger generation = new AtomicInteger();
    private volatile Template template;
    private volatile boolean closed;
    /** Non-zero while refills pause after a failed start: the pause's length in ms. */
    private volatile long backoffMs = 0;
    /** Consecutive failed starts; the pause doubles with each, up to {@link #MAX_BACKOFF_MS}. */
    private int failures;
    private volatile String lastError;
    private volatile long lastClaimNanos;
    private final long refillQuietMs;
    /** True while a deferred refill is scheduled on the timer. */
    private final AtomicBoolean refillScheduled = new AtomicBoolean();

    private final TemplateImages images;
    /** The current attempt at the template's image; null before the first refill. Guarded by this. */
    private Preparation preparation;
    /** The prepared image (empty: the runtime's built-in root); null while not ready. */
    private volatile Optional<SandboxImage> image;
    /** Failed preparations in a row; guarded by this. */
    private int prepareFailures;
    /** When the next preparation starts after a failure (System.nanoTime), 0 when none is due. */
    private volatile long retryAtNanos;

    /**
     * A pool of its own host (tests of the refill policy).
     *
     * @param refillQuietMs claim-free time after which a refill starts (tests shorten or lengthen it)
     */
    WarmPool(String clusterId, Template template, SandboxStarter runtime, SlotLimit slots, Executor starter,
             ScheduledExecutorService timer, long refillQuietMs) {
        this(clusterId, template, runtime, new WarmPoolHost(slots, starter, timer), refillQuietMs,
                TemplateImages.BUILT_IN_ONLY);
    }

    private WarmPool(String clusterId, Template template, SandboxStarter runtime, WarmPoolHost host, long refillQuietMs,
                     TemplateImages images) {
        this.images = images;
        this.refillQuietMs = refillQuietMs;
        this.clusterId = clusterId;
        this.template = template;
        this.runtime = runtime;
        this.host = host;
        this.slots = host.slots;
        this.starter = host.starter;
        this.timer = host.timer;
    }

    /**
     * Opens a pool on {@code host} and starts filling it (preparing the template's image first).
     *
     * @param images prepares the template's image before the pool starts sandboxes
     */
    static WarmPool open(String clusterId, Template template, SandboxStarter runtime, WarmPoolHost host,
                         TemplateImages images) {
        WarmPool pool = new WarmPool(clusterId, template, runtime, host, REFILL_QUIET_MS, images);
        host.add(pool);
        pool.refill();
        return pool;
    }

    @Override
    public Template template() {
        return template;
    }

    @Override
    public int idle() {
        return idleCount.get();
    }

    /** Free host slots (shared by every pool of the host), plus the other pools' idle sandboxes a claim here would evict. */
    @Override
    public int headroom() {
        return Math.max(0, slots.max() - slots.used()) + host.evictableFor(this);
    }

    /**
     * Kills one idle sandbox for another pool's claim ({@link WarmPoolHost#evictIdleFor}) without
     * releasing its slot: the claimer takes it over. This pool refills when a slot frees.
     *
     * @return false when it had no idle sandbox left
     */
    boolean evictOne() {
        RuntimeSandbox s = idle.pollLast(); // the newest: claims here take the oldest first
        if (s == null) {
            return false;
        }
        idleCount.decrementAndGet();
        try {
            s.kill();
        } catch (RuntimeException e) {
            log.warn("pool '{}': evicting idle sandbox {} for another pool's claim: {}", template.getName(), s.id(),
                    e.getMessage());
        }
        log.info("pool '{}': idle sandbox {} evicted for another pool's claim (host at its limit of {})",
                template.getName(), s.id(), slots.max());
        return true;
    }

    /**
     * Applies a new version of the template: resize, or replace idle sandboxes if their shape
     * changed; a new image is prepared before sandboxes start again.
     */
    @Override
    public void update(Template next) {
        Template prev = template;
        template = next;
        if (!imageKey(prev).equals(imageKey(next)) || (image == null && !prev.getImage().equals(next.getImage()))) {
            synchronized (this) {
                generation.incrementAndGet();
                image = null;
                retryAtNanos = 0;
                prepareFailures = 0;
                Preparation old = preparation;
                preparation = null; // first: a cancel may complete the old result at once, which must look superseded
                if (old != null) {
                    old.cancel();
                }
            }
            drainIdleInBackground();
            signal.signal(); // claims waiting here now fail with the new image's state
        } else if (!sameShape(prev, next)) {
            generation.incrementAndGet();
            drainIdleInBackground();
        } else {
            trimToTarget();
        }
        refill();
    }

    /** Pops an idle, live sandbox, or null when the pool has none. Never starts a process. */
    RuntimeSandbox poll() {
        RuntimeSandbox s;
        while ((s = idle.pollFirst()) != null) {
            int left = idleCount.decrementAndGet();
            if (s.isAlive()) {
                lastClaimNanos = System.nanoTime();
                if (left < template.getPoolSize() / 4) {
                    refill();
                } else {
                    refillWhenQuiet();
                }
                return s;
            }
            discard(s);
        }
        refill();
        return null;
    }

    /**
     * Pops an idle sandbox, or starts one on the calling thread when the pool is empty and the
     * host has a free slot; else waits for either up to {@code wait}. The sandbox's id is the one
     * it got at start (its layer directory is named by it).
     */
    @Override
    public RuntimeSandbox claim(ClaimRequest request, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            long seen = signal.version();
            if (closed) {
                throw Status.UNAVAILABLE.withDescription("the pool of template '" + template.getName() + "' on cluster "
                        + clusterId + " was closed").asRuntimeException();
            }
            Optional<SandboxImage> img = image;
            if (img == null) {
                throw Status.UNAVAILABLE.withDescription(notReadyMessage()).asRuntimeException();
            }
            RuntimeSandbox s = poll();
            if (s != null) {
                return s;
            }
            if (slots.tryAcquire() || host.evictIdleFor(this)) {
                try {
                    return runtime.start(SandboxIds.newSandboxId(clusterId), template, img);
                } catch (RuntimeException e) {
                    host.release();
                    throw e;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw ErrorReason.NO_CAPACITY.exception(Status.Code.RESOURCE_EXHAUSTED, "cluster " + clusterId
                        + " is at its limit of " + slots.max() + " sandboxes");
            }
            try {
                signal.await(seen, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted while waiting for a sandbox").asRuntimeException();
            }
        }
    }

    /** Schedules one refill for when claims have paused for {@link #REFILL_QUIET_MS}. */
    private void refillWhenQuiet() {
        if (!refillScheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            timer.schedule(this::refillIfQuiet, refillQuietMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            refillScheduled.set(false);
        }
    }

    private void refillIfQuiet() {
        long quietMs = (System.nanoTime() - lastClaimNanos) / 1_000_000;
        if (quietMs < refillQuietMs && !closed) {
            try {
                timer.schedule(this::refillIfQuiet, refillQuietMs - quietMs, TimeUnit.MILLISECONDS);
                return;
            } catch (RejectedExecutionException shuttingDown) {
                // fall through
            }
        }
        refillScheduled.set(false);
        refill();
    }

    @Override
    public void released(RuntimeSandbox sandbox) {
        host.release();
    }

    /** A slot freed on the host: waiting claims may start a sandbox, and a held-back refill may go on. */
    void slotFreed() {
        signal.signal();
        refill();
    }

    /**
     * Starts sandboxes in the background until idle + starting reaches pool_size (within the slot
     * limit); while the image is not ready, starts preparing it instead (once).
     */
    synchronized void refill() {
        if (preparation == null && !closed) {
            prepare();
        }
        Optional<SandboxImage> img = image;
        if (img == null) {
            return; // prepared() refills once the image is ready
        }
        while (!closed && backoffMs == 0 && starting.get() + idleCount.get() < template.getPoolSize()) {
            if (!slots.tryAcquire()) {
                return; // host at its sandbox limit; a kill calls refill again
            }
            starting.incrementAndGet();
            int gen = generation.get();
            starter.execute(() -> startOne(gen, img));
        }
    }

    /** Starts an attempt at the current template's image. */
    private synchronized void prepare() {
        retryAtNanos = 0;
        Preparation p = images.prepare(template);
        preparation = p;
        p.result().whenComplete((img, err) -> prepared(p, img, err));
    }

    private void prepared(Preparation p, Optional<SandboxImage> img, Throwable err) {
        synchronized (this) {
            if (p != preparation || closed) {
                return; // superseded by a template change, or the pool is gone
            }
            if (err == null) {
                image = img;
                prepareFailures = 0;
            } else {
                long delay = Math.min(PREPARE_MAX_BACKOFF_MS, PREPARE_MIN_BACKOFF_MS << Math.min(prepareFailures, 16));
                prepareFailures++;
                String why = p.state().message().isEmpty() ? String.valueOf(err.getMessage()) : p.state().message();
                log.warn("pool '{}': image {} is not ready ({}); trying again in {} s", template.getName(),
                        template.getImage(), why, delay / 1000);
                retryAtNanos = System.nanoTime() + delay * 1_000_000;
                try {
                    timer.schedule(() -> retryPrepare(p), delay, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException shuttingDown) {
                    retryAtNanos = 0;
                }
                return;
            }
        }
        if (!template.getImage().isEmpty()) {
            log.info("pool '{}': image {} is ready", template.getName(), template.getImage());
        }
        refill();
    }

    private synchronized void retryPrepare(Preparation failed) {
        if (failed == preparation && !closed) {
            prepare();
        }
    }

    /**
     * The state of the template's image: ready once prepared; else the preparation's state, an
     * error naming when the next attempt starts.
     */
    @Override
    public ImageState imageState() {
        if (image != null) {
            return ImageState.READY;
        }
        Preparation p;
        synchronized (this) {
            p = preparation;
        }
        if (p == null) {
            return ImageState.pulling("");
        }
        ImageState s = p.state();
        if (s.isReady()) {
            return ImageState.pulling("ready, starting sandboxes"); // result() callback not run yet
        }
        long retryAt = retryAtNanos;
        if (PoolReadiness.ERROR.equals(s.status()) && retryAt != 0) {
            long inS = Math.max(0, (retryAt - System.nanoTime()) / 1_000_000_000L);
            return ImageState.error(s.message() + " (trying again in " + inS + " s)");
        }
        return s;
    }

    /** {@code template 'NAME' is not ready: pulling IMAGE on cluster C: progress}, or the error. */
    private String notReadyMessage() {
        ImageState s = imageState();
        return PoolReadiness.notReady(template.getName(),
                PoolReadiness.describe(s.status(), template.getImage(), clusterId, s.message()));
    }

    /**
     * The last start failure's message while the pool cannot start sandboxes (cleared by a start
     * that succeeds), or null.
     */
    @Override
    public String lastError() {
        return lastError;
    }

    /** One pause per failure streak step; concurrent failures while paused do not stack. */
    private synchronized void pauseAfter(RuntimeException e) {
        lastError = e.getMessage();
        if (backoffMs != 0 || closed) {
            return;
        }
        long next = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS << Math.min(failures, 16));
        failures++;
        log.warn("pool '{}': cannot start a sandbox ({}); retrying in {} ms", template.getName(), e.getMessage(), next);
        backoffMs = next;
        try {
            timer.schedule(() -> {
                backoffMs = 0;
                refill();
            }, next, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            closed = true;
        }
    }

    private void startOne(int gen, Optional<SandboxImage> img) {
        RuntimeSandbox s = null;
        try {
            s = runtime.start(SandboxIds.newSandboxId(clusterId), template, img);
            synchronized (this) {
                failures = 0;
                lastError = null;
            }
        } catch (RuntimeException e) {
            pauseAfter(e);
        }
        if (s == null) {
            starting.decrementAndGet();
            host.release();
            return;
        }
        if (closed || gen != generation.get()) {
            starting.decrementAndGet();
            discard(s);
            return;
        }
        idle.addLast(s);
        idleCount.incrementAndGet();
        starting.decrementAndGet();
        if (closed) {
            drainIdle();
        }
        trimToTarget();
        signal.signal();
    }

    private void trimToTarget() {
        while (idleCount.get() > template.getPoolSize()) {
            RuntimeSandbox s = idle.pollLast();
            if (s == null) {
                return;
            }
            idleCount.decrementAndGet();
            discard(s);
        }
    }

    /** As {@link #close}, but the idle sandboxes are killed in the background (see {@link #drainIdleInBackground}). */
    @Override
    public void retire() {
        stop();
        drainIdleInBackground();
    }

    /** Kills every idle sandbox, stops refilling, gives up the image preparation and fails waiting claims. */
    @Override
    public void close() {
        stop();
        drainIdle();
    }

    private void stop() {
        Preparation p;
        synchronized (this) {
            closed = true;
            p = preparation;
        }
        host.remove(this);
        signal.signal();
        if (p != null) {
            p.cancel();
        }
    }

    private void drainIdle() {
        takeIdle().forEach(this::discardQuietly);
    }

    /**
     * Takes every idle sandbox out of the pool at once (no claim gets one after this returns) and
     * kills them one after another on a starter thread: a removal costs tens of milliseconds of
     * runtime work, so a pool of a thousand would hold the caller, the template watch, for close
     * to two minutes (measured: 105–115 s on the local runtime). One thread, so the host's other
     * pools keep starting sandboxes meanwhile; each sandbox's slot is released as it ends.
     */
    private void drainIdleInBackground() {
        List<RuntimeSandbox> victims = takeIdle();
        if (victims.isEmpty()) {
            return;
        }
        String name = template.getName();
        Runnable drain = () -> {
            long t0 = System.nanoTime();
            victims.forEach(this::discardQuietly);
            log.info("pool '{}': {} idle sandboxes removed in {} ms", name, victims.size(), (System.nanoTime() - t0) / 1_000_000);
        };
        try {
            starter.execute(drain);
        } catch (RejectedExecutionException shuttingDown) {
            drain.run();
        }
    }

    private List<RuntimeSandbox> takeIdle() {
        List<RuntimeSandbox> taken = new ArrayList<>();
        RuntimeSandbox s;
        while ((s = idle.pollFirst()) != null) {
            idleCount.decrementAndGet();
            taken.add(s);
        }
        return taken;
    }

    private void discardQuietly(RuntimeSandbox s) {
        try {
            discard(s);
        } catch (RuntimeException e) {
            log.warn("pool '{}': removing idle sandbox {} failed: {}", template.getName(), s.id(), e.getMessage());
        }
    }

    private void discard(RuntimeSandbox s) {
        try {
            s.kill();
        } finally {
            host.release();
        }
    }

    private static boolean sameShape(Template a, Template b) {
        return shape(a).equals(shape(b));
    }

    private static Template shape(Template t) {
        Template.Builder s = t.toBuilder().setPoolSize(0);
        if (!t.getSnapshot().isEmpty()) {
            s.setImage(""); // see imageKey
        }
        return s.build();
    }

    /**
     * What decides a pool's file system: a snapshot's id, whatever image reference it also has (the
     * hub's copy of a snapshot holds the same content, so re-pointing a snapshot template at that
     * copy must not drain a pool that runs the snapshot already), else the image reference.
     */
    private static String imageKey(Template t) {
        return t.getSnapshot().isEmpty() ? "image:" + t.getImage() : "snapshot:" + t.getSnapshot();
    }
}
