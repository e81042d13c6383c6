package io.agentbox.manager.store;

import io.agentbox.mux.util.DaemonThreads;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandbox records for the public API, written to the {@link SandboxStore} by one writer thread in
 * batches (one commit per batch) instead of one transaction per create or kill: a commit with its
 * history row cost about a third of the hub's CPU per claim (JFR, docs/benchmarks.md).
 *
 * <p>Reads see every accepted write at once: records with writes still queued are served from
 * memory, the rest from the store. Up to {@link #MAX_QUEUED} writes wait; beyond that callers
 * wait for room (back-pressure, nothing is dropped). A hub that dies loses the writes of
 * the last few milliseconds; their sandboxes keep running on the worker until their timeout.
 * Other readers of the store (management API, lost-sandbox marking) see a write once its batch
 * committed, normally within a millisecond. {@link SandboxStore}'s listeners hear of a write when it
 * is accepted, before its commit.
 */
public final class SandboxWriteBehind implements AutoCloseable {
    static final int MAX_QUEUED = 100_000;
    static final int MAX_BATCH = 1_000;

    private static final Logger log = LoggerFactory.getLogger(SandboxWriteBehind.class);

    /** The newest state of a record whose write {@code seq} (or a later one) is not committed yet. */
    private record Pending(SandboxRecord record, long seq) {}

    private record Queued(SandboxStore.Write write, long seq) {}

    /** Queued by {@link #close()}: the writer stops once it reaches it (no interrupt: H2 closes its file on one). */
    private static final Queued STOP = new Queued(null, Long.MAX_VALUE);

    private final SandboxStore store;
    private final Clock clock;
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    private final BlockingQueue<Queued> queue = new ArrayBlockingQueue<>(MAX_QUEUED);
    private final AtomicLong seqs = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;

    public SandboxWriteBehind(SandboxStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
        this.writer = DaemonThreads.start("sandbox-record-writer", this::writeLoop);
    }

    /**
     * Records a new sandbox.
     *
     * @throws StoreException INVALID_ARGUMENT for a malformed record; CONFLICT when its id is
     *     recorded already (queued or committed: one indexed read, no transaction)
     */
    public void insert(SandboxRecord r) {
        SandboxStore.check(r);
        synchronized (lockFor(r.sandboxId())) {
            if (get(r.sandboxId()).isPresent()) {
                throw StoreException.conflict("sandbox '" + r.sandboxId() + "' is already recorded");
            }
            enqueue(r, new SandboxStore.Insert(r, false));
        }
    }

    /**
     * Records a sandbox its worker has just created, whose id is therefore new: unlike
     * {@link #insert} no database read on the caller's thread (the create's hot path). A record
     * queued under the id already wins at once; one committed already (an adoption from the
     * worker's report that overtook the create) wins when the batch is written.
     *
     * @throws StoreException INVALID_ARGUMENT for a malformed record
     */
    public void insertCreated(SandboxRecord r) {
        SandboxStore.check(r);
        synchronized (lockFor(r.sandboxId())) {
            if (!pending.containsKey(r.sandboxId())) {
                enqueue(r, new SandboxStore.Insert(r, true));
            }
        }
    }

    public Optional<SandboxRecord> get(String sandboxId) {
        Pending p = pending.get(sandboxId);
        return p != null ? Optional.of(p.record()) : store.get(sandboxId);
    }

    /** Sandboxes of {@code team} (every team when null) that have not ended, oldest first. */
    public List<SandboxRecord> active(String team) {
        // queued writes first: one committed (and dropped from the queue) between the two reads is
        // then in the database read; read the other way round, it was in neither (OneWorldTest saw it)
        List<Pending> queued = new ArrayList<>(pending.values());
        Map<String, SandboxRecord> byId = new LinkedHashMap<>();
        for (SandboxRecord r : store.active(team)) {
            byId.put(r.sandboxId(), r);
        }
        for (Pending p : queued) {
            SandboxRecord r = p.record();
            if (team != null && !team.equals(r.team())) {
                continue;
            }
            if (r.ended()) {
                byId.remove(r.sandboxId());
            } else {
                byId.put(r.sandboxId(), r);
            }
        }
        List<SandboxRecord> out = new ArrayList<>(byId.values());
        out.sort(Comparator.comparingLong(SandboxRecord::createdAtMs).thenComparing(SandboxRecord::sandboxId));
        return out;
    }

    /** Moves a running sandbox's deadline; false when it is unknown or has ended. */
    public boolean updateEndAt(String sandboxId, long endAtMs) {
        synchronized (lockFor(sandboxId)) {
            Optional<SandboxRecord> r = get(sandboxId).filter(x -> !x.ended());
            if (r.isEmpty()) {
                return false;
            }
            enqueue(r.get().withEndAt(endAtMs), new SandboxStore.EndAt(sandboxId, endAtMs, clock.millis()));
            return true;
        }
    }

    /** Marks a running sandbox paused at {@code atMs}; false when it is unknown, ended or paused already. */
    public boolean markPaused(String sandboxId, long atMs) {
        synchronized (lockFor(sandboxId)) {
            Optional<SandboxRecord> r = get(sandboxId).filter(x -> !x.ended() && !x.paused());
            if (r.isEmpty()) {
                return false;
            }
            enqueue(r.get().withPause(atMs, r.get().endAtMs()), new SandboxStore.Pause(sandboxId, atMs, 0, clock.millis()));
            return true;
        }
    }

    /** Marks a paused sandbox running again with deadline {@code endAtMs}; false when unknown, ended or not paused. */
    public boolean markResumed(String sandboxId, long endAtMs) {
        synchronized (lockFor(sandboxId)) {
            Optional<SandboxRecord> r = get(sandboxId).filter(x -> !x.ended() && x.paused());
            if (r.isEmpty()) {
                return false;
            }
            enqueue(r.get().withPause(0, endAtMs), new SandboxStore.Pause(sandboxId, 0, endAtMs, clock.millis()));
            return true;
        }
    }

    /** Marks a sandbox ended; false when it was unknown or had already ended. */
    public boolean markEnded(String sandboxId, String reason) {
        String why = Checks.text("end reason", reason);
        synchronized (lockFor(sandboxId)) {
            Optional<SandboxRecord> r = get(sandboxId).filter(x -> !x.ended());
            if (r.isEmpty()) {
                return false;
            }
            long now = clock.millis();
            enqueue(r.get().endedAt(now, why), new SandboxStore.End(sandboxId, why, now));
            return true;
        }
    }

    /** Writes what is queued, then stops the writer; later writes go to the store directly. */
    @Override
    public void close() {
        closed = true;
        try {
            queue.put(STOP);
            writer.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Queued> late = new ArrayList<>();
        queue.drainTo(late); // enqueued as close began
        late.stream().filter(q -> q != STOP).forEach(q -> report(store.writeAll(List.of(q.write()))));
        pending.clear();
    }

    /** Orders the read-modify-write of one id (striped locks). */
    private Object lockFor(String sandboxId) {
        return LOCKS[(sandboxId.hashCode() & 0x7fffffff) % LOCKS.length];
    }

    private static final Object[] LOCKS = new Object[64];

    static {
        for (int i = 0; i < LOCKS.length; i++) {
            LOCKS[i] = new Object();
        }
    }

    private void enqueue(SandboxRecord state, SandboxStore.Write write) {
        // callers hold the id's lock: listeners hear one sandbox's changes in order
        SandboxChange.Op op = write instanceof SandboxStore.Insert ? SandboxChange.Op.CREATED
                : write instanceof SandboxStore.End ? SandboxChange.Op.ENDED : SandboxChange.Op.UPDATED;
        if (closed) {
            report(store.writeAll(List.of(write)));
            store.changed(op, state);
            return;
        }
        long seq = seqs.incrementAndGet();
        // in the map before the writer can see the write, so that its commit clears the entry
        pending.put(state.sandboxId(), new Pending(state, seq));
        store.changed(op, state); // readers see the change from here on
        try {
            queue.put(new Queued(write, seq)); // blocks while MAX_QUEUED wait: back-pressure
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            report(store.writeAll(List.of(write)));
            pending.computeIfPresent(state.sandboxId(), (id, p) -> p.seq() == seq ? null : p);
        }
    }

    private void writeLoop() {
        List<Queued> batch = new ArrayList<>(MAX_BATCH);
        boolean stop = false;
        while (!stop) {
            try {
                batch.add(queue.take());
            } catch (InterruptedException e) {
                return;
            }
            queue.drainTo(batch, MAX_BATCH - 1);
            stop = batch.remove(STOP);
            List<SandboxStore.Write> writes = new ArrayList<>(batch.size());
            batch.forEach(q -> writes.add(q.write()));
            try {
                if (!writes.isEmpty()) {
                    report(store.writeAll(writes));
                }
            } catch (RuntimeException e) {
                log.error("cannot write {} sandbox records: {}", writes.size(), e.toString());
            }
            for (Queued q : batch) {
                pending.computeIfPresent(q.write().sandboxId(), (id, p) -> p.seq() <= q.seq() ? null : p);
            }
            batch.clear();
        }
    }

    private static void report(Map<SandboxStore.Write, RuntimeException> failed) {
        failed.forEach((w, e) -> log.error("sandbox record write {} failed: {}", w, e.getMessage()));
    }
}
