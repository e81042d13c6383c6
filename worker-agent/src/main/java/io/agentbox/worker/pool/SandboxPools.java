package io.agentbox.worker.pool;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.SandboxMetric;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.image.TemplateImages;
import io.agentbox.worker.metrics.MetricsSampler;
import io.agentbox.worker.metrics.WorkerMeters;
import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.EnvVars;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.agentbox.worker.runtime.SandboxStarter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's pools (one {@link RuntimePool} per template, opened by the template's runtime),
 * the claimed sandboxes, and the reaper that kills claimed sandboxes whose end time passed.
 * Thread-safe.
 *
 * <p>Runtimes: each template names one ({@code runtime}, empty = {@code local}); templates whose
 * runtime this worker does not run are ignored. Every runtime opens its pools through
 * {@link SandboxRuntime#openPool} with this worker's {@link PoolContext}: a runtime the worker
 * fills itself ({@code local}) gets the generic {@link WarmPool}, one that keeps its own pools
 * ({@code kubernetes}) returns its own. Claims, commands and kills look the same for all of them.
 *
 * <p>Images: a {@link WarmPool} starts sandboxes of a template with an {@code image} only once
 * {@link TemplateImages} has prepared it; {@link #capacity()} reports each pool's image state.
 */
public final class SandboxPools implements AutoCloseable {
    /** Default host-wide limit on live sandboxes (idle + starting + claimed). */
    public static final int DEFAULT_MAX_SANDBOXES = 64;
    /** How long a claim waits for a sandbox when its pool has none idle and cannot start one now. */
    public static final Duration CLAIM_WAIT = Duration.ofSeconds(10);
    static final long REAP_INTERVAL_MS = 250;
    /** Longest a claim waits for its template to arrive (CreateSandboxRequest.template_wait_ms). */
    static final long MAX_TEMPLATE_WAIT_MS = 5_000;
    static final long CLOSE_WAIT_MS = 20_000;
    /** How often claimed sandboxes' OOM kill counts are read (and once more right before a kill). */
    static final long OOM_CHECK_MS = 5_000;

    private static final Logger log = LoggerFactory.getLogger(SandboxPools.class);

    private final String clusterId;
    private final Map<String, SandboxRuntime> runtimes = new HashMap<>();
    private final Map<String, RuntimePool> pools = new ConcurrentHashMap<>();
    private final Map<String, ClaimedSandbox> claimed = new ConcurrentHashMap<>();
    private final ExecutorService starter;
    private final SlotLimit slots;
    private final ScheduledExecutorService timer;
    /** Slot limit, threads and timer of the warm pools. */
    private final WarmPoolHost warm;
    private final TemplateImages images;
    private final MetricsSampler sampler;
    private final WorkerMeters meters;
    private volatile boolean closed;

    public SandboxPools(String clusterId, SandboxRuntime runtime, int maxSandboxes) {
        this(clusterId, List.of(runtime), maxSandboxes);
    }

    /**
     * @param runtimes the runtimes this worker runs, at most one per name
     * @param maxSandboxes host-wide limit on live sandboxes in warm pools (runtimes the worker fills itself)
     * @throws IllegalArgumentException for an empty list or two runtimes of one name
     */
    public SandboxPools(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes) {
        this(clusterId, runtimes, maxSandboxes, TemplateImages.BUILT_IN_ONLY);
    }

    /**
     * As above; {@code images} prepares the images of templates that name one before their pools
     * start sandboxes.
     */
    public SandboxPools(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes, TemplateImages images) {
        this(clusterId, runtimes, maxSandboxes, images, WorkerMeters.none());
    }

    /** As above; {@code meters} records pools, claims, starts, commands and OOM kills. */
    public SandboxPools(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes, TemplateImages images,
                        WorkerMeters meters) {
        this.clusterId = clusterId;
        this.meters = Objects.requireNonNull(meters, "meters");
        this.images = Objects.requireNonNull(images, "images");
        for (SandboxRuntime r : runtimes) {
            if (this.runtimes.put(r.name(), r) != null) {
                throw new IllegalArgumentException("two runtimes named '" + r.name() + "'");
            }
        }
        if (this.runtimes.isEmpty()) {
            throw new IllegalArgumentException("a worker needs at least one runtime");
        }
        this.slots = new SlotLimit(maxSandboxes);
        this.starter = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()),
                DaemonThreads.numbered("pool-starter"));
        this.timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pool-reaper"));
        this.warm = new WarmPoolHost(slots, starter, timer);
        timer.scheduleWithFixedDelay(this::reap, REAP_INTERVAL_MS, REAP_INTERVAL_MS, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::countOomKills, OOM_CHECK_MS, OOM_CHECK_MS, TimeUnit.MILLISECONDS);
        this.sampler = new MetricsSampler(claimed::values);
    }

    /** Authoritative set of templates: creates/resizes pools present, drains pools absent. */
    public synchronized void apply(Collection<Template> templates) {
        if (closed) {
            return;
        }
        Map<String, Template> wanted = new HashMap<>();
        for (Template t : templates) {
            if (!t.getName().isEmpty() && runtimes.containsKey(runtimeOf(t))) {
                wanted.put(t.getName(), t);
            }
        }
        for (var it = pools.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            Template next = wanted.get(e.getKey());
            if (next == null || !runtimeOf(next).equals(runtimeOf(e.getValue().template()))) {
                it.remove();
                e.getValue().retire();
                log.info("pool '{}' removed", e.getKey());
            }
        }
        for (Template t : wanted.values()) {
            RuntimePool pool = pools.get(t.getName());
            if (pool == null) {
                pool = open(t);
                if (pool != null) {
                    pools.put(t.getName(), pool);
                    meters.pool(WorkerMeters.templateLabel(t), counts);
                    log.info("pool '{}' created with {} warm sandboxes ({} runtime)", t.getName(), t.getPoolSize(),
                            runtimeOf(t));
                }
            } else if (!pool.template().equals(t)) {
                pool.update(t);
            }
        }
    }

    private RuntimePool open(Template t) {
        SandboxRuntime runtime = runtimes.get(runtimeOf(t));
        try {
            return runtime.openPool(t, new Context(t));
        } catch (RuntimeException e) {
            log.warn("pool '{}' cannot be opened on the {} runtime: {}", t.getName(), runtime.name(), e.getMessage());
            return null;
        }
    }

    /** This worker as a runtime sees it when it opens the pool of {@code template}. */
    private final class Context implements PoolContext {
        private final Template template;

        Context(Template template) {
            this.template = template;
        }

        @Override
        public String clusterId() {
            return clusterId;
        }

        @Override
        public TemplateImages images() {
            return images;
        }

        @Override
        public RuntimePool warmPool(Template t, SandboxStarter starter) {
            SandboxStarter timed = (id, tpl, image) -> {
                long start = System.nanoTime();
                RuntimeSandbox s = starter.start(id, tpl, image);
                meters.started(WorkerMeters.templateLabel(tpl), System.nanoTime() - start);
                return s;
            };
            return WarmPool.open(clusterId, t, timed, warm, images);
        }

        @Override
        public void adopt(RuntimeSandbox sandbox, SandboxClaim claim) {
            SandboxPools.this.adopt(template, sandbox, claim);
        }
    }

    /** A sandbox claimed before this worker started (found by its runtime) becomes claimed here again. */
    private void adopt(Template template, RuntimeSandbox sandbox, SandboxClaim claim) {
        ClaimedSandbox c = new ClaimedSandbox(sandbox, template, clusterId, claim.owner(), Map.of(), Map.of(),
                claim.startedAtMs(), claim.endAtMs(), Lifecycle.KILL, () -> { });
        if (claimed.putIfAbsent(c.id(), c) == null) {
            log.info("sandbox {} adopted from the {} runtime", c.id(), runtimeOf(template));
        }
    }

    private static String runtimeOf(Template t) {
        return t.getRuntime().isEmpty() ? "local" : t.getRuntime();
    }

    /**
     * Claims a sandbox: pops an idle one (no process start), or starts one when the pool is
     * empty, then applies the request's env vars, metadata, owner and end time: {@code end_at_ms}
     * as the hub decided it, else now + {@code timeout_seconds} (or the template's default, or
     * {@link SandboxTimeouts#DEFAULT_SECONDS}); see {@link EndTimes}.
     *
     * @throws StatusRuntimeException INVALID_ARGUMENT for an end time the worker will not
     *     honour (past, or beyond {@link SandboxTimeouts#MAX_SECONDS}), NOT_FOUND for an unknown template, RESOURCE_EXHAUSTED
     *     when the host is at its limit for {@link #CLAIM_WAIT}, UNAVAILABLE when starting failed or
     *     the template's image is not ready ({@link #notReady})
     */
    public ClaimedSandbox claim(CreateSandboxRequest req) {
        long start = System.nanoTime();
        RuntimePool found = pools.get(req.getTemplate());
        RuntimePool pool = found != null || req.getTemplateWaitMs() <= 0 ? found
                : awaitPool(req.getTemplate(), Math.min(MAX_TEMPLATE_WAIT_MS, req.getTemplateWaitMs()));
        if (pool == null || closed) {
            throw ErrorReason.TEMPLATE_NOT_FOUND.exception(Status.Code.NOT_FOUND, "template '" + req.getTemplate()
                    + "' is not available on cluster " + clusterId);
        }
        Template template = pool.template();
        String label = WorkerMeters.templateLabel(template);
        try {
            ClaimedSandbox c = claim(req, pool, template);
            meters.claimed(label, System.nanoTime() - start, "ok");
            return c;
        } catch (StatusRuntimeException e) {
            meters.claimed(label, System.nanoTime() - start, e.getStatus().getCode().name().toLowerCase(java.util.Locale.ROOT));
            throw e;
        }
    }

    private ClaimedSandbox claim(CreateSandboxRequest req, RuntimePool pool, Template template) {
        EnvVars.requireValid(req.getEnvVarsMap());
        long seconds = req.getTimeoutSeconds() > 0 ? req.getTimeoutSeconds()
                : template.getDefaultTimeoutSeconds() > 0 ? template.getDefaultTimeoutSeconds()
                : SandboxTimeouts.DEFAULT_SECONDS;
        long now = System.currentTimeMillis();
        long endAt = EndTimes.decide(req.getEndAtMs(), seconds, now);
        RuntimeSandbox sandbox = pool.claim(new ClaimRequest(req.getOwner(), now, endAt), CLAIM_WAIT);
        ClaimedSandbox c = new ClaimedSandbox(sandbox, template, clusterId, req.getOwner(), req.getMetadataMap(),
                req.getEnvVarsMap(), now, endAt, Lifecycle.of(req), () -> pool.released(sandbox));
        claimed.put(c.id(), c);
        sampler.claimed(c);
        if (closed) {
            kill(c.id());
            throw Status.UNAVAILABLE.withDescription("worker is shutting down").asRuntimeException();
        }
        return c;
    }

    /** A pool that is about to arrive with the template watch (a snapshot the hub just recorded). */
    private RuntimePool awaitPool(String template, long waitMs) {
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        RuntimePool pool = pools.get(template);
        while (pool == null && !closed && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            pool = pools.get(template);
        }
        return pool;
    }

    /**
     * A claimed sandbox, running or paused.
     *
     * @throws StatusRuntimeException NOT_FOUND + {@link ErrorReason#SANDBOX_NOT_FOUND} when
     *     the sandbox is not claimed here
     */
    public ClaimedSandbox get(String sandboxId) {
        ClaimedSandbox c = claimed.get(sandboxId);
        if (c == null) {
            throw notFound(sandboxId, "not found");
        }
        if (!c.runtime().isAlive()) {
            log.info("sandbox {} is no longer running; removing it", sandboxId);
            kill(sandboxId);
            throw notFound(sandboxId, "is no longer running");
        }
        return c;
    }

    /**
     * A claimed sandbox that is not paused: for commands, files and ports.
     *
     * @throws StatusRuntimeException as {@link #get}; FAILED_PRECONDITION +
     *     {@link ErrorReason#SANDBOX_PAUSED} when it is paused
     */
    public ClaimedSandbox running(String sandboxId) {
        return get(sandboxId).requireRunning();
    }

    private static StatusRuntimeException notFound(String sandboxId, String what) {
        return ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND, "sandbox '" + sandboxId + "' " + what);
    }

    /**
     * Pauses a claimed sandbox (see {@link ClaimedSandbox#pause}): it keeps its slot and, unless
     * {@code dropMemory}, its memory; its end time no longer applies.
     *
     * @throws StatusRuntimeException NOT_FOUND + SANDBOX_NOT_FOUND; FAILED_PRECONDITION +
     *     SANDBOX_CONFLICT when already paused; UNIMPLEMENTED when its runtime cannot freeze
     */
    public ClaimedSandbox pause(String sandboxId, boolean dropMemory) {
        ClaimedSandbox c = get(sandboxId);
        c.pause(dropMemory);
        log.info("sandbox {} paused ({})", sandboxId, dropMemory ? "processes dropped, files kept" : "frozen in memory");
        return c;
    }

    /**
     * Resumes a paused sandbox with a new end ({@code endAtMs} as the hub decided it, else now +
     * {@code seconds}, else now + {@link SandboxTimeouts#DEFAULT_SECONDS}); on a running one only
     * moves a later end in.
     *
     * @return whether it was paused, and the sandbox
     * @throws StatusRuntimeException NOT_FOUND + SANDBOX_NOT_FOUND; INVALID_ARGUMENT for an
     *     end the worker will not honour ({@link EndTimes})
     */
    public Resumed resume(String sandboxId, long seconds, long endAtMs, boolean dropMemory) {
        long endAt = EndTimes.decide(endAtMs, seconds > 0 ? seconds : SandboxTimeouts.DEFAULT_SECONDS,
                System.currentTimeMillis());
        ClaimedSandbox c = get(sandboxId);
        boolean resumed = c.resume(endAt, dropMemory);
        if (resumed) {
            log.info("sandbox {} resumed{}", sandboxId, dropMemory ? " with its processes dropped" : "");
        }
        return new Resumed(c, resumed);
    }

    /** A resume's outcome: the sandbox, and whether it was paused. */
    public record Resumed(ClaimedSandbox sandbox, boolean resumed) {}

    /** Claimed sandboxes, oldest first; {@code owner} empty = all. */
    public List<ClaimedSandbox> list(String owner) {
        List<ClaimedSandbox> out = new ArrayList<>();
        for (ClaimedSandbox c : claimed.values()) {
            if (owner == null || owner.isEmpty() || owner.equals(c.owner())) {
                out.add(c);
            }
        }
        out.sort(Comparator.comparingLong((ClaimedSandbox c) -> c.info().getStartedAtMs()).thenComparing(ClaimedSandbox::id));
        return out;
    }

    /**
     * Sets the end time to {@code endAtMs} as the hub decided it, or (when 0) to now + seconds.
     *
     * @throws StatusRuntimeException INVALID_ARGUMENT for an end the worker will not
     *     honour ({@link EndTimes}), NOT_FOUND when the sandbox is not claimed here,
     *     FAILED_PRECONDITION + SANDBOX_PAUSED when it is paused
     */
    public ClaimedSandbox setTimeout(String sandboxId, long seconds, long endAtMs) {
        if (endAtMs == 0 && seconds <= 0) {
            throw Status.INVALID_ARGUMENT.withDescription("timeout_seconds must be positive").asRuntimeException();
        }
        long endAt = EndTimes.decide(endAtMs, seconds, System.currentTimeMillis());
        ClaimedSandbox c = running(sandboxId); // a paused sandbox has no end time to set
        c.setEndAtMs(endAt);
        return c;
    }

    /**
     * Kills a claimed sandbox (processes and files) and frees its slot.
     *
     * @throws StatusRuntimeException NOT_FOUND when unknown
     */
    public void kill(String sandboxId) {
        ClaimedSandbox c = claimed.remove(sandboxId);
        if (c == null) {
            throw notFound(sandboxId, "not found");
        }
        countOomKills(c); // the cgroup goes with the kill
        try {
            c.runtime().kill();
        } finally {
            c.released(); // a warm pool's slot: wakes the host's warm pools (waiting claims, refills)
        }
    }

    /** The meters this worker records into (commands count themselves through it). */
    public WorkerMeters meters() {
        return meters;
    }

    /** Counts the OOM kills of every claimed sandbox since the last check. */
    private void countOomKills() {
        try {
            claimed.values().forEach(this::countOomKills);
        } catch (RuntimeException e) {
            log.warn("counting OOM kills failed", e);
        }
    }

    private void countOomKills(ClaimedSandbox c) {
        long n = c.takeOomKills();
        if (n > 0) {
            meters.oomKilled(WorkerMeters.templateLabel(c.template()), n);
            log.info("sandbox {}: {} process(es) killed at its memory limit ({} MiB)", c.id(), n, c.template().getMemoryMb());
        }
    }

    /** The pools' gauges, by label (a snapshot's template counts as {@link WorkerMeters#SNAPSHOT_LABEL}). */
    private final WorkerMeters.PoolCounts counts = new WorkerMeters.PoolCounts() {
        @Override
        public int idle(String label) {
            return pools.values().stream().filter(p -> WorkerMeters.templateLabel(p.template()).equals(label))
                    .mapToInt(RuntimePool::idle).sum();
        }

        @Override
        public int running(String label) {
            return (int) claimed.values().stream().filter(c -> WorkerMeters.templateLabel(c.template()).equals(label)).count();
        }

        @Override
        public int paused(String label) {
            return (int) claimed.values().stream()
                    .filter(c -> c.isPaused() && WorkerMeters.templateLabel(c.template()).equals(label)).count();
        }

        @Override
        public int target(String label) {
            return pools.values().stream().filter(p -> WorkerMeters.templateLabel(p.template()).equals(label))
                    .mapToInt(p -> p.template().getPoolSize()).sum();
        }
    };

    /**
     * Why a create of {@code template} cannot be served here now because its image is not ready
     * ({@code template 'T' is not ready: pulling IMAGE on cluster C: progress}), or null when it
     * is ready or has no pool here.
     */
    public String notReady(String template) {
        RuntimePool p = pools.get(template);
        if (p == null) {
            return null;
        }
        ImageState s = p.imageState();
        return s.isReady() ? null : PoolReadiness.notReady(template,
                PoolReadiness.describe(s.status(), p.template().getImage(), clusterId, s.message()));
    }

    /**
     * Per pool: idle, running (claimed, paused included: they keep their slot and their memory),
     * paused (of those), capacity = idle + running + the pool's headroom, and the image's status
     * and message.
     */
    public List<PoolCapacity> capacity() {
        Map<String, Integer> running = new HashMap<>();
        Map<String, Integer> paused = new HashMap<>();
        for (ClaimedSandbox c : claimed.values()) {
            running.merge(c.templateName(), 1, Integer::sum);
            if (c.isPaused()) {
                paused.merge(c.templateName(), 1, Integer::sum);
            }
        }
        List<PoolCapacity> out = new ArrayList<>();
        for (RuntimePool p : pools.values()) {
            String name = p.template().getName();
            int idle = p.idle();
            int run = running.getOrDefault(name, 0);
            ImageState image = p.imageState();
            out.add(PoolCapacity.newBuilder().setTemplate(name).setIdle(idle).setRunning(run)
                    .setCapacity(idle + run + p.headroom()).setPaused(paused.getOrDefault(name, 0))
                    .setStatus(image.status())
                    .setStatusMessage(image.message()).build());
        }
        out.sort(Comparator.comparing(PoolCapacity::getTemplate));
        return out;
    }

    /**
     * Sandboxes holding a host slot: idle, starting, claimed and being removed (runtimes the worker
     * fills itself). More than the pools' idle + claimed while starts or removals are under way.
     */
    public int liveSandboxes() {
        return slots.used();
    }

    /** Per template, why its pool cannot start sandboxes now (pools that can are left out). */
    public Map<String, String> startErrors() {
        Map<String, String> out = new TreeMap<>();
        for (RuntimePool p : pools.values()) {
            String e = p.lastError();
            if (e != null) {
                out.put(p.template().getName(), e);
            }
        }
        return out;
    }

    /**
     * Kills sandboxes that died, and running ones past their end time, except that one created
     * with auto-pause is paused instead (killed when its runtime cannot pause). Paused sandboxes
     * have no end time: they stay until killed (E2B, docs/e2b-wire.md#pause).
     */
    private void reap() {
        long now = System.currentTimeMillis();
        for (ClaimedSandbox c : List.copyOf(claimed.values())) {
            boolean died = !c.runtime().isAlive();
            if (!died && (c.isPaused() || c.endAtMs() > now)) {
                continue;
            }
            if (!died && c.lifecycle().autoPause()) {
                try {
                    c.pause(c.lifecycle().dropMemory());
                    log.info("sandbox {} paused at its end time (auto-pause)", c.id());
                    continue;
                } catch (StatusRuntimeException e) {
                    if (ErrorReason.of(e).orElse(null) == ErrorReason.SANDBOX_CONFLICT) {
                        continue; // paused concurrently
                    }
                    log.warn("sandbox {} cannot be auto-paused ({}); killing it", c.id(), e.getStatus());
                }
            }
            try {
                kill(c.id());
                log.info("sandbox {} reaped ({})", c.id(), died ? "died" : "timeout");
            } catch (RuntimeException e) {
                // killed concurrently
            }
        }
    }

    /**
     * The metric samples of a claimed sandbox with {@code startMs ≤ time ≤ endMs} (0 = open),
     * oldest first; empty where its runtime cannot measure.
     *
     * @throws StatusRuntimeException NOT_FOUND + SANDBOX_NOT_FOUND
     */
    public List<SandboxMetric> metrics(String sandboxId, long startMs, long endMs) {
        return get(sandboxId).metrics().range(startMs, endMs);
    }

    /**
     * Kills every idle and claimed sandbox, except those that outlive the worker (pods a
     * restarted worker adopts again); idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        sampler.close();
        for (RuntimePool p : pools.values()) {
            p.close();
        }
        pools.clear();
        for (ClaimedSandbox c : List.copyOf(claimed.values())) {
            if (c.runtime().outlivesWorker()) {
                claimed.remove(c.id());
                continue;
            }
            try {
                kill(c.id());
            } catch (RuntimeException ignored) {
                // already gone
            }
        }
        starter.shutdown();
        try {
            starter.awaitTermination(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
