package io.agentbox.worker.pool;

import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
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
 * Idle sandboxes of one template, kept at {@code pool_size} by background starts. Claims pop
 * from an in-memory queue; a sandbox leaves the pool exactly once (claimed or killed), so a
 * killed sandbox is never handed out again. Every live sandbox holds one host slot.
 *
 * <p>Refills yield to claims: a sandbox start costs milliseconds of host CPU (forks, namespaces,
 * mounts), so starting one per claim while claims keep coming would slow every claim of a burst.
 * After a claim the refill waits until no claim came for {@link #REFILL_QUIET_MS}, unless the idle
 * sandboxes fell below a quarter of the pool size: then it starts at once.
 */
final class WarmPool implements TemplatePool {
    static final long MIN_BACKOFF_MS = 500;
    static final long MAX_BACKOFF_MS = 30_000;
    /** Claim-free time after which a refill starts (see the class comment). */
    static final long REFILL_QUIET_MS = 20;

    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);

    private final String clusterId;
    private final SandboxRuntime runtime;
    private final SlotLimit slots;
    private final Executor starter;
    private final ScheduledExecutorService timer;

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

    WarmPool(String clusterId, Template template, SandboxRuntime runtime, SlotLimit slots, Executor starter,
             ScheduledExecutorService timer) {
        this(clusterId, template, runtime, slots, starter, timer, REFILL_QUIET_MS);
    }

    /** @param refillQuietMs claim-free time after which a refill starts (tests shorten or lengthen it) */
    WarmPool(String clusterId, Template template, SandboxRuntime runtime, SlotLimit slots, Executor starter,
             ScheduledExecutorService timer, long refillQuietMs) {
        this.refillQuietMs = refillQuietMs;
        this.clusterId = clusterId;
        this.template = template;
        this.runtime = runtime;
        this.slots = slots;
        this.starter = starter;
        this.timer = timer;
    }

    @Override
    public Template template() {
        return template;
    }

    @Override
    public String runtime() {
        return runtime.name();
    }

    @Override
    public int idle() {
        return idleCount.get();
    }

    /** Free host slots (shared by every pool of the host). */
    @Override
    public int headroom() {
        return Math.max(0, slots.max() - slots.used());
    }

    /** Applies a new version of the template: resize, or replace idle sandboxes if their shape changed. */
    @Override
    public void update(Template next) {
        Template prev = template;
        template = next;
        if (!sameShape(prev, next)) {
            generation.incrementAndGet();
            drainIdle();
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
     * host has a free slot; waits for a slot up to {@link SandboxPools#CLAIM_WAIT}. The local
     * runtime names sandboxes at start, so {@code claim}'s id is not used.
     */
    @Override
    public RuntimeSandbox take(SandboxClaim claim) {
        long deadline = System.nanoTime() + SandboxPools.CLAIM_WAIT.toNanos();
        while (true) {
            RuntimeSandbox s = poll();
            if (s != null) {
                return s;
            }
            if (slots.tryAcquire()) {
                try {
                    return runtime.start(SandboxIds.newSandboxId(clusterId), template);
                } catch (RuntimeException e) {
                    slots.release();
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw Status.RESOURCE_EXHAUSTED.withDescription("cluster " + clusterId + " is at its limit of "
                        + slots.max() + " sandboxes").asRuntimeException();
            }
            try {
                Thread.sleep(20);
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
    public void released() {
        slots.release();
    }

    /** Starts sandboxes in the background until idle + starting reaches pool_size (within the slot limit). */
    @Override
    public synchronized void refill() {
        while (!closed && backoffMs == 0 && starting.get() + idleCount.get() < template.getPoolSize()) {
            if (!slots.tryAcquire()) {
                return; // host at its sandbox limit; a kill calls refill again
            }
            starting.incrementAndGet();
            int gen = generation.get();
            starter.execute(() -> startOne(gen));
        }
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

    private void startOne(int gen) {
        RuntimeSandbox s = null;
        try {
            s = runtime.start(SandboxIds.newSandboxId(clusterId), template);
            synchronized (this) {
                failures = 0;
                lastError = null;
            }
        } catch (RuntimeException e) {
            pauseAfter(e);
        }
        if (s == null) {
            slots.release();
            starting.decrementAndGet();
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

    @Override
    public void retire() {
        close();
    }

    /** Kills every idle sandbox and stops refilling. */
    @Override
    public void close() {
        closed = true;
        drainIdle();
    }

    private void drainIdle() {
        List<RuntimeSandbox> victims = new ArrayList<>();
        RuntimeSandbox s;
        while ((s = idle.pollFirst()) != null) {
            idleCount.decrementAndGet();
            victims.add(s);
        }
        victims.forEach(this::discard);
    }

    private void discard(RuntimeSandbox s) {
        try {
            s.kill();
        } finally {
            slots.release();
        }
    }

    private static boolean sameShape(Template a, Template b) {
        return a.toBuilder().setPoolSize(0).build().equals(b.toBuilder().setPoolSize(0).build());
    }
}
