package io.agentbox.manager.store;

import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub-wide resource version and the log of changes behind it: what versioned watches need to
 * send a snapshot at a version, then every change after it.
 *
 * <h2>Versions</h2>
 * One counter for all kinds, starting at 1. Every change of an API key, team, template, cluster or
 * cluster config increments it in the changing transaction and appends one {@link Change}. The
 * counter's row lock serializes writers, so versions commit in order: a reader that has seen
 * version V will never later find a change numbered V or lower that it has not seen. This holds
 * across several hub replicas sharing one PostgreSQL database.
 *
 * <h2>Retention</h2>
 * The log keeps about the newest {@value #DEFAULT_RETAINED} entries: every
 * {@value #DEFAULT_PRUNE_EVERY}th version, the writer drops older ones ({@link #prune(long)}). A
 * watcher whose last version is older than {@link #oldestRetained()} must take a fresh snapshot
 * instead of replaying changes.
 *
 * <h2>Listeners</h2>
 * {@link #addListener} callbacks run after commit, on the writing thread, in version order per
 * writer; they must not block. They only see changes made through this JVM's store; other hub
 * replicas must poll {@link #changesSince}.
 */
public final class ChangeLog {
    private static final Logger log = LoggerFactory.getLogger(ChangeLog.class);

    /** Largest page {@link #changesSince} returns. */
    public static final int MAX_PAGE = 10_000;
    /** Entries kept: a worker offline for this many changes resyncs from a snapshot. */
    public static final long DEFAULT_RETAINED = 100_000;
    /** Pruning runs on every version divisible by this. */
    public static final int DEFAULT_PRUNE_EVERY = 1_000;

    /** What changed. {@link #column()} is the value stored in {@code changes.kind}. */
    public enum Kind {
        API_KEY("api_key"), TEAM("team"), TEMPLATE("template"), CLUSTER("cluster"), CLUSTER_CONFIG("cluster_config"),
        TEAM_LIMITS("team_limits");

        private final String column;

        Kind(String column) {
            this.column = column;
        }

        public String column() {
            return column;
        }

        static Kind fromColumn(String value) {
            for (Kind k : values()) {
                if (k.column.equals(value)) {
                    return k;
                }
            }
            throw new StoreException("unknown change kind in the change log: " + value, null);
        }
    }

    /** Whether the item now exists ({@code UPSERT}) or is gone ({@code DELETE}; a revoked key is gone). */
    public enum Op { UPSERT, DELETE }

    /**
     * One change.
     *
     * @param version     resource version this change produced (unique, increasing)
     * @param kind        what kind of item changed
     * @param name        the item's id: key id, team name, template name or cluster id
     * @param op          upsert or delete
     * @param changedAtMs when, Unix epoch milliseconds
     */
    public record Change(long version, Kind kind, String name, Op op, long changedAtMs) {}

    private final Database db;
    private final Clock clock;
    private final List<Consumer<Change>> listeners = new CopyOnWriteArrayList<>();
    private volatile long retained = DEFAULT_RETAINED;
    private volatile int pruneEvery = DEFAULT_PRUNE_EVERY;

    ChangeLog(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** The newest resource version (1 on a fresh store). */
    public long currentVersion() {
        return db.first("SELECT version FROM resource_version WHERE id = 1", rs -> rs.getLong(1))
                .orElseThrow(() -> new StoreException("resource_version row is missing", null));
    }

    /** The oldest version still in the log, or {@link #currentVersion()} + 1 when the log is empty. */
    public long oldestRetained() {
        long oldest = db.first("SELECT COALESCE(MIN(version), 0) FROM changes", rs -> rs.getLong(1)).orElse(0L);
        return oldest > 0 ? oldest : currentVersion() + 1;
    }

    /**
     * Changes of {@code kind} with a version above {@code sinceVersion}, oldest first, at most
     * {@code limit} (1..{@value #MAX_PAGE}). Complete only when {@code sinceVersion + 1 >=
     * oldestRetained()}; otherwise older changes were pruned and the caller needs a snapshot.
     */
    public List<Change> changesSince(Kind kind, long sinceVersion, int limit) {
        if (limit < 1 || limit > MAX_PAGE) {
            throw StoreException.invalid("limit must be between 1 and " + MAX_PAGE + ", got " + limit);
        }
        return db.query("SELECT version, kind, name, op, changed_at FROM changes WHERE kind = ? AND version > ? "
                        + "ORDER BY version LIMIT " + limit,
                rs -> new Change(rs.getLong(1), Kind.fromColumn(rs.getString(2)), rs.getString(3),
                        Op.valueOf(rs.getString(4).toUpperCase(Locale.ROOT)), rs.getLong(5)),
                kind.column(), sinceVersion);
    }

    /**
     * The version of the newest retained change of {@code kind} at or below {@code atMost}, or 0
     * when the log holds none (never changed, or pruned). A snapshot of one kind taken at version
     * S is also the state as of {@code latestVersion(kind, S)}, which lets a watcher that applied
     * that change resume instead of taking the snapshot again.
     */
    public long latestVersion(Kind kind, long atMost) {
        return db.first("SELECT COALESCE(MAX(version), 0) FROM changes WHERE kind = ? AND version <= ?",
                rs -> rs.getLong(1), kind.column(), atMost).orElse(0L);
    }

    /** Deletes all but the newest {@code keep} entries; returns how many went. */
    public int prune(long keep) {
        if (keep < 0) {
            throw StoreException.invalid("keep must not be negative");
        }
        return db.update("DELETE FROM changes WHERE version <= ?", currentVersion() - keep);
    }

    /** Changes the retention (tests use small numbers); {@code keep} ≥ 0, {@code every} ≥ 1. */
    void retention(long keep, int every) {
        if (keep < 0 || every < 1) {
            throw StoreException.invalid("retention needs keep >= 0 and every >= 1");
        }
        this.retained = keep;
        this.pruneEvery = every;
    }

    /** Registers a callback run after each committed change made through this store (see class doc). */
    public void addListener(Consumer<Change> listener) {
        listeners.add(listener);
    }

    /**
     * Inside a writing transaction: takes the next version (locking the counter row until commit)
     * and logs the change. Call {@link #published} with the result after commit.
     */
    Change record(Database.Tx tx, Kind kind, String name, Op op) throws SQLException {
        tx.update("UPDATE resource_version SET version = version + 1 WHERE id = 1");
        long version = tx.first("SELECT version FROM resource_version WHERE id = 1", rs -> rs.getLong(1)).orElseThrow();
        long now = clock.millis();
        tx.update("INSERT INTO changes (version, kind, name, op, changed_at) VALUES (?, ?, ?, ?, ?)",
                version, kind.column(), name, op.name().toLowerCase(Locale.ROOT), now);
        return new Change(version, kind, name, op, now);
    }

    /** Notifies listeners of committed changes. */
    void published(List<Change> changes) {
        for (Change c : changes) {
            for (Consumer<Change> l : listeners) {
                try {
                    l.accept(c);
                } catch (RuntimeException e) {
                    log.warn("change listener failed on {}", c, e);
                }
            }
        }
    }

    /** Runs {@code work} in a transaction that makes changes, then notifies listeners of them. */
    <T> T write(WriteWork<T> work) {
        List<Change> made = new ArrayList<>();
        T result = db.inTransaction(tx -> {
            // lock the counter before reading anything, so check-then-write sequences cannot interleave
            tx.query("SELECT version FROM resource_version WHERE id = 1 FOR UPDATE", rs -> rs.getLong(1));
            return work.run(tx, (kind, name, op) -> {
            Change c = record(tx, kind, name, op);
            made.add(c);
            return c.version();
            });
        });
        published(made);
        if (made.stream().anyMatch(c -> c.version() % pruneEvery == 0)) {
            prune(retained);
        }
        return result;
    }

    /**
     * Reads {@code items} as they were at one resource version. Optimistic: reads the version before
     * and after and retries when a writer committed in between (every write bumps the version);
     * after {@value #SNAPSHOT_TRIES} tries it reads while holding the version row lock.
     */
    <T> Snapshot<T> snapshot(Database.TxWork<List<T>> items) {
        for (int i = 0; i < SNAPSHOT_TRIES; i++) {
            Snapshot<T> s = db.inTransaction(tx -> {
                long before = versionIn(tx, "");
                List<T> read = items.run(tx);
                return versionIn(tx, "") == before ? new Snapshot<>(before, read) : null;
            });
            if (s != null) {
                return s;
            }
        }
        return db.inTransaction(tx -> {
            long version = versionIn(tx, " FOR UPDATE");
            return new Snapshot<>(version, items.run(tx));
        });
    }

    static final int SNAPSHOT_TRIES = 3;

    private static long versionIn(Database.Tx tx, String suffix) throws SQLException {
        return tx.first("SELECT version FROM resource_version WHERE id = 1" + suffix, rs -> rs.getLong(1)).orElseThrow();
    }

    /** Records one change in the current transaction and returns its version. */
    @FunctionalInterface
    interface Recorder {
        long record(Kind kind, String name, Op op) throws SQLException;
    }

    @FunctionalInterface
    interface WriteWork<T> {
        T run(Database.Tx tx, Recorder changes) throws SQLException;
    }
}
