package io.agentbox.manager.store;

import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Optional;
import java.util.Set;

/**
 * Per-team quotas and their hub-wide defaults ({@code team_limits}). Every change takes a resource
 * version (kind {@code team_limits}, named by the team or {@value #DEFAULTS} for the defaults).
 * {@link #effective} is what the public API checks on every create: read through a cache that this
 * JVM's changes clear at once (at most 1 s stale for changes made by another hub replica).
 * Thread-safe.
 */
public final class TeamLimitStore {
    /** Row (and change-log name) of the hub-wide defaults; not a valid team name. */
    public static final String DEFAULTS = "*";
    private static final String SELECT = "SELECT team, max_sandboxes, creates_per_second, updated_at, resource_version "
            + "FROM team_limits WHERE team = ?";

    /**
     * What is stored for a team (or the defaults).
     *
     * @param resourceVersion version of the last change; 0 when never set
     * @param updatedAtMs     Unix epoch milliseconds of the last change; 0 when never set
     */
    public record Stored(String team, TeamLimits limits, long updatedAtMs, long resourceVersion) {}

    private final Database db;
    private final ChangeLog changes;
    private final Clock clock;
    private final ChangeCache<String, TeamLimits> cache;

    TeamLimitStore(Database db, ChangeLog changes, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.clock = clock;
        this.cache = new ChangeCache<>(changes, Set.of(Kind.TEAM_LIMITS), ChangeCache.TTL);
    }

    /** The hub-wide defaults (nothing set when never changed). */
    public Stored defaults() {
        return read(DEFAULTS);
    }

    /**
     * A team's own limits (nothing set when never changed).
     *
     * @throws StoreException NOT_FOUND when the team does not exist
     */
    public Stored get(String team) {
        requireTeam(team);
        return read(team);
    }

    /** Replaces the hub-wide defaults; a null field removes that default (no limit). */
    public Stored setDefaults(TeamLimits limits) {
        return write(DEFAULTS, limits);
    }

    /**
     * Replaces a team's own limits; a null field falls back to the default.
     *
     * @throws StoreException NOT_FOUND when the team does not exist
     */
    public Stored set(String team, TeamLimits limits) {
        requireTeam(team);
        return write(team, limits);
    }

    /** The limits that apply to {@code team}: its own where set, else the defaults (cached; any team name). */
    public TeamLimits effective(String team) {
        TeamLimits own = cache.get(team, t -> Optional.of(read(t).limits())).orElseThrow();
        TeamLimits defaults = cache.get(DEFAULTS, t -> Optional.of(read(t).limits())).orElseThrow();
        return own.orElse(defaults);
    }

    private void requireTeam(String team) {
        if (team == null || db.first("SELECT 1 FROM teams WHERE name = ?", rs -> 1, team).isEmpty()) {
            throw StoreException.notFound("team '" + team + "' not found");
        }
    }

    private Stored write(String team, TeamLimits limits) {
        return changes.write((tx, log) -> {
            if (!DEFAULTS.equals(team) && tx.first("SELECT 1 FROM teams WHERE name = ?", rs -> 1, team).isEmpty()) {
                throw StoreException.notFound("team '" + team + "' not found");
            }
            long version = log.record(Kind.TEAM_LIMITS, team, Op.UPSERT);
            long now = clock.millis();
            int updated = tx.update("UPDATE team_limits SET max_sandboxes = ?, creates_per_second = ?, updated_at = ?, "
                    + "resource_version = ? WHERE team = ?", limits.maxSandboxes(), limits.createsPerSecond(), now, version, team);
            if (updated == 0) {
                tx.update("INSERT INTO team_limits (team, max_sandboxes, creates_per_second, updated_at, resource_version) "
                        + "VALUES (?, ?, ?, ?, ?)", team, limits.maxSandboxes(), limits.createsPerSecond(), now, version);
            }
            return tx.first(SELECT, TeamLimitStore::stored, team).orElseThrow();
        });
    }

    /** Inside a team's deletion: forgets its limits. */
    static void deleteTeam(Database.Tx tx, ChangeLog.Recorder log, String team) throws SQLException {
        if (tx.update("DELETE FROM team_limits WHERE team = ?", team) > 0) {
            log.record(Kind.TEAM_LIMITS, team, Op.DELETE);
        }
    }

    private Stored read(String team) {
        return db.first(SELECT, TeamLimitStore::stored, team).orElse(new Stored(team, TeamLimits.NONE, 0, 0));
    }

    private static Stored stored(ResultSet rs) throws SQLException {
        int max = rs.getInt(2);
        Integer maxSandboxes = rs.wasNull() ? null : max;
        double rate = rs.getDouble(3);
        Double createsPerSecond = rs.wasNull() ? null : rate;
        return new Stored(rs.getString(1), new TeamLimits(maxSandboxes, createsPerSecond), rs.getLong(4), rs.getLong(5));
    }
}
