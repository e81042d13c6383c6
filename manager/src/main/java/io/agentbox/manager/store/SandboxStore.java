package io.agentbox.manager.store;

import io.agentbox.protocol.SandboxIds;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Sandbox records and their history. Sandboxes are not versioned: workers own them, the hub
 * only remembers them. Thread-safe. Tenancy is the caller's job: pass the caller's team.
 *
 * <p>Changes are reported to {@link SandboxChange.Listener}s: those of the single-write methods
 * here after their commit, those written behind in batches ({@link SandboxWriteBehind}) when they
 * are accepted; {@link #writeAll} itself reports nothing.
 */
public final class SandboxStore {
    private static final String SELECT =
            "SELECT sandbox_id, cluster_id, template, team, metadata, created_at, end_at, ended, end_reason, "
            + "auto_pause, auto_pause_memory, auto_resume, paused_at FROM sandboxes";
    /** Most rows {@link #history} returns. */
    public static final int MAX_HISTORY = 1000;

    private final Database db;
    private final Clock clock;
    private final List<SandboxChange.Listener> listeners = new CopyOnWriteArrayList<>();

    SandboxStore(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /**
     * Records a new sandbox and its {@code created} event.
     *
     * @throws StoreException INVALID_ARGUMENT for a malformed id, cluster, template, team or metadata;
     *     CONFLICT when the id is already recorded
     */
    public void insert(SandboxRecord r) {
        check(r);
        db.inTransaction(tx -> {
            insertIn(tx, r);
            return null;
        });
        changed(SandboxChange.Op.CREATED, r);
    }

    /** Reports every later change to {@code listener}. */
    public void addListener(SandboxChange.Listener listener) {
        listeners.add(listener);
    }

    /** Tells the active listeners of a change; {@code r} is the record after it. */
    void changed(SandboxChange.Op op, SandboxRecord r) {
        for (SandboxChange.Listener l : listeners) {
            if (l.active()) {
                l.changed(new SandboxChange(op, r));
            }
        }
    }

    /** As {@link #changed(SandboxChange.Op, SandboxRecord)} with the record read back, when a write changed something. */
    private boolean changedById(boolean wrote, SandboxChange.Op op, String sandboxId) {
        if (wrote && listeners.stream().anyMatch(SandboxChange.Listener::active)) {
            get(sandboxId).ifPresent(r -> changed(op, r));
        }
        return wrote;
    }

    static void check(SandboxRecord r) {
        if (!SandboxIds.isValidSandboxId(r.sandboxId()) || !SandboxIds.isValidClusterId(r.clusterId())) {
            throw StoreException.invalid("invalid sandbox id '" + r.sandboxId() + "' or cluster id '" + r.clusterId() + "'");
        }
        if (r.template() == null || r.template().isEmpty() || r.team() == null || r.team().isEmpty()) {
            throw StoreException.invalid("a sandbox record needs a template and a team");
        }
        Checks.stringMap("metadata", r.metadata());
    }

    private static void insertIn(Database.Tx tx, SandboxRecord r) throws SQLException {
        if (tx.first("SELECT 1 FROM sandboxes WHERE sandbox_id = ?", rs -> 1, r.sandboxId()).isPresent()) {
            throw StoreException.conflict("sandbox '" + r.sandboxId() + "' is already recorded");
        }
        tx.update("INSERT INTO sandboxes (sandbox_id, cluster_id, template, team, metadata, created_at, end_at, ended, "
                        + "end_reason, ended_at, auto_pause, auto_pause_memory, auto_resume, paused_at) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                r.sandboxId(), r.clusterId(), r.template(), r.team(), StoreJson.write(r.metadata()), r.createdAtMs(),
                r.endAtMs(), r.ended(), r.endReason(), r.ended() ? r.endAtMs() : null, r.lifecycle().autoPause(),
                r.lifecycle().keepMemory(), r.lifecycle().autoResume(), r.paused() ? r.pausedAtMs() : null);
        event(tx, r.sandboxId(), r.createdAtMs(), SandboxEvent.CREATED, "");
    }

    /** One write of {@link #writeAll}: an insert, an end, or a new deadline. */
    public sealed interface Write permits Insert, End, EndAt, Pause {
        String sandboxId();
    }

    /**
     * {@link #insert} as a batch item; with {@code ifAbsent} a record already stored under the id
     * wins and this one is dropped without an error (a sandbox adopted from its worker's report
     * before its create's record was written).
     */
    public record Insert(SandboxRecord record, boolean ifAbsent) implements Write {
        public String sandboxId() {
            return record.sandboxId();
        }
    }

    /** {@link #markEnded} as a batch item, at {@code atMs}. */
    public record End(String sandboxId, String reason, long atMs) implements Write {}

    /** {@link #updateEndAt} as a batch item, at {@code atMs}. */
    public record EndAt(String sandboxId, long endAtMs, long atMs) implements Write {}

    /** {@link #markPaused} ({@code pausedAtMs} > 0) or {@link #markResumed} (0, with the new deadline) as a batch item. */
    public record Pause(String sandboxId, long pausedAtMs, long endAtMs, long atMs) implements Write {}

    /**
     * Applies {@code writes} in order in one transaction (one commit for all). When one fails the
     * batch is retried one write per transaction, so only the bad write is lost.
     *
     * @return the writes that failed, with why
     */
    public Map<Write, RuntimeException> writeAll(List<? extends Write> writes) {
        try {
            db.inTransaction(tx -> {
                for (Write w : writes) {
                    apply(tx, w);
                }
                return null;
            });
            return Map.of();
        } catch (RuntimeException batchFailed) {
            Map<Write, RuntimeException> failed = new LinkedHashMap<>();
            for (Write w : writes) {
                try {
                    db.inTransaction(tx -> {
                        apply(tx, w);
                        return null;
                    });
                } catch (RuntimeException e) {
                    failed.put(w, e);
                }
            }
            return failed;
        }
    }

    private void apply(Database.Tx tx, Write w) throws SQLException {
        if (w instanceof Insert i) {
            check(i.record());
            if (i.ifAbsent() && tx.first("SELECT 1 FROM sandboxes WHERE sandbox_id = ?", rs -> 1, i.sandboxId()).isPresent()) {
                return;
            }
            insertIn(tx, i.record());
        } else if (w instanceof End e) {
            markEndedIn(tx, e.sandboxId(), Checks.text("end reason", e.reason()), e.atMs());
        } else if (w instanceof EndAt e) {
            updateEndAtIn(tx, e.sandboxId(), e.endAtMs(), e.atMs());
        } else if (w instanceof Pause p) {
            pauseIn(tx, p.sandboxId(), p.pausedAtMs(), p.endAtMs(), p.atMs());
        }
    }

    public Optional<SandboxRecord> get(String sandboxId) {
        return db.first(SELECT + " WHERE sandbox_id = ?", SandboxStore::sandbox, sandboxId);
    }

    /** Sandboxes of {@code team} (every team when null) that have not ended, oldest first. */
    public List<SandboxRecord> active(String team) {
        if (team == null) {
            return db.query(SELECT + " WHERE ended = FALSE ORDER BY created_at, sandbox_id", SandboxStore::sandbox);
        }
        return db.query(SELECT + " WHERE team = ? AND ended = FALSE ORDER BY created_at, sandbox_id",
                SandboxStore::sandbox, team);
    }

    /** Ended sandboxes of {@code team}, most recently ended first, at most {@code limit} (1..{@value #MAX_HISTORY}). */
    public List<SandboxRecord> history(String team, int limit) {
        Checks.range("limit", limit, 1, MAX_HISTORY);
        return db.query(SELECT + " WHERE team = ? AND ended = TRUE ORDER BY ended_at DESC, sandbox_id LIMIT " + limit,
                SandboxStore::sandbox, team);
    }

    /** The events of one sandbox, oldest first; empty for an unknown sandbox. */
    public List<SandboxEvent> events(String sandboxId) {
        return db.query("SELECT sandbox_id, at, event, detail FROM sandbox_events WHERE sandbox_id = ? ORDER BY id",
                rs -> new SandboxEvent(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4)), sandboxId);
    }

    /** Moves a running sandbox's deadline; returns false when it is unknown or has ended. */
    public boolean updateEndAt(String sandboxId, long endAtMs) {
        return changedById(db.inTransaction(tx -> updateEndAtIn(tx, sandboxId, endAtMs, clock.millis())),
                SandboxChange.Op.UPDATED, sandboxId);
    }

    private static boolean updateEndAtIn(Database.Tx tx, String sandboxId, long endAtMs, long now) throws SQLException {
        if (tx.update("UPDATE sandboxes SET end_at = ? WHERE sandbox_id = ? AND ended = FALSE", endAtMs, sandboxId) == 0) {
            return false;
        }
        event(tx, sandboxId, now, SandboxEvent.TIMEOUT_SET, Long.toString(endAtMs));
        return true;
    }

    /** Marks a running sandbox paused at {@code atMs}; false when it is unknown, ended or paused already. */
    public boolean markPaused(String sandboxId, long atMs) {
        return changedById(db.inTransaction(tx -> pauseIn(tx, sandboxId, atMs, 0, clock.millis())),
                SandboxChange.Op.UPDATED, sandboxId);
    }

    /** Marks a paused sandbox running again with deadline {@code endAtMs}; false when it is unknown, ended or not paused. */
    public boolean markResumed(String sandboxId, long endAtMs) {
        return changedById(db.inTransaction(tx -> pauseIn(tx, sandboxId, 0, endAtMs, clock.millis())),
                SandboxChange.Op.UPDATED, sandboxId);
    }

    private static boolean pauseIn(Database.Tx tx, String sandboxId, long pausedAtMs, long endAtMs, long now) throws SQLException {
        if (pausedAtMs > 0) {
            if (tx.update("UPDATE sandboxes SET paused_at = ? WHERE sandbox_id = ? AND ended = FALSE AND paused_at IS NULL",
                    pausedAtMs, sandboxId) == 0) {
                return false;
            }
            event(tx, sandboxId, now, SandboxEvent.PAUSED, "");
            return true;
        }
        if (tx.update("UPDATE sandboxes SET paused_at = NULL, end_at = ? WHERE sandbox_id = ? AND ended = FALSE "
                + "AND paused_at IS NOT NULL", endAtMs, sandboxId) == 0) {
            return false;
        }
        event(tx, sandboxId, now, SandboxEvent.RESUMED, Long.toString(endAtMs));
        return true;
    }

    /** Marks a sandbox ended; returns false when it was unknown or had already ended. */
    public boolean markEnded(String sandboxId, String reason) {
        String why = Checks.text("end reason", reason);
        long now = clock.millis();
        return changedById(db.inTransaction(tx -> markEndedIn(tx, sandboxId, why, now)), SandboxChange.Op.ENDED, sandboxId);
    }

    private static boolean markEndedIn(Database.Tx tx, String sandboxId, String why, long now) throws SQLException {
        if (tx.update("UPDATE sandboxes SET ended = TRUE, end_reason = ?, end_at = LEAST(end_at, ?), ended_at = ?, paused_at = NULL "
                + "WHERE sandbox_id = ? AND ended = FALSE", why, now, now, sandboxId) == 0) {
            return false;
        }
        event(tx, sandboxId, now, SandboxEvent.ENDED, why);
        return true;
    }

    /**
     * Forgets sandboxes that ended before {@code cutoffMs} (epoch milliseconds), with their events.
     *
     * @return how many sandbox records went
     */
    public int deleteEndedBefore(long cutoffMs) {
        return db.inTransaction(tx -> {
            tx.update("DELETE FROM sandbox_events WHERE sandbox_id IN "
                    + "(SELECT sandbox_id FROM sandboxes WHERE ended = TRUE AND ended_at < ?)", cutoffMs);
            return tx.update("DELETE FROM sandboxes WHERE ended = TRUE AND ended_at < ?", cutoffMs);
        });
    }

    private static void event(Database.Tx tx, String sandboxId, long at, String event, String detail) throws SQLException {
        tx.update("INSERT INTO sandbox_events (sandbox_id, at, event, detail) VALUES (?, ?, ?, ?)", sandboxId, at, event, detail);
    }

    private static SandboxRecord sandbox(ResultSet rs) throws SQLException {
        long pausedAt = rs.getLong(13); // 0 for SQL NULL
        return new SandboxRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                StoreJson.stringMap(rs.getString(5)), rs.getLong(6), rs.getLong(7), rs.getBoolean(8), rs.getString(9),
                new SandboxLifecycle(rs.getBoolean(10), rs.getBoolean(11), rs.getBoolean(12)), pausedAt);
    }
}
