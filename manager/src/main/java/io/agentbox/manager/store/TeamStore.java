package io.agentbox.manager.store;

import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/** Teams (tenants). Creating an API key for an unknown team creates the team. Thread-safe. */
public final class TeamStore {
    private static final String SELECT = "SELECT name, description, created_at, resource_version FROM teams";

    private final Database db;
    private final ChangeLog changes;
    private final Clock clock;

    TeamStore(Database db, ChangeLog changes, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.clock = clock;
    }

    /**
     * Creates a team.
     *
     * @throws StoreException INVALID_ARGUMENT for a bad name or description, CONFLICT when it exists
     */
    public Team create(String name, String description) {
        Checks.name("team name", name);
        String text = Checks.text("description", description);
        return changes.write((tx, log) -> {
            if (get(tx, name).isPresent()) {
                throw StoreException.conflict("team '" + name + "' already exists");
            }
            insert(tx, log, name, text);
            return get(tx, name).orElseThrow();
        });
    }

    public Optional<Team> get(String name) {
        return db.first(SELECT + " WHERE name = ?", TeamStore::team, name);
    }

    /** Every team, sorted by name. */
    public List<Team> list() {
        return db.query(SELECT + " ORDER BY name", TeamStore::team);
    }

    /**
     * Deletes a team that no longer has valid API keys, running sandboxes, snapshots or templates
     * built with {@code Template.build}. Snapshots and built templates are refused rather than
     * dropped here: their images live in workers' stores, which only their E2B delete
     * ({@code DELETE /templates/{id}} with a key of the team, before the keys are revoked) cleans up;
     * a row deleted here would leave them there for good.
     *
     * @throws StoreException NOT_FOUND when unknown, CONFLICT while still referenced (naming what)
     */
    public void delete(String name) {
        changes.write((tx, log) -> {
            if (get(tx, name).isEmpty()) {
                throw StoreException.notFound("team '" + name + "' not found");
            }
            long keys = tx.first("SELECT COUNT(*) FROM api_keys WHERE team = ? AND revoked_at IS NULL",
                    rs -> rs.getLong(1), name).orElse(0L);
            long running = tx.first("SELECT COUNT(*) FROM sandboxes WHERE team = ? AND ended = FALSE",
                    rs -> rs.getLong(1), name).orElse(0L);
            long snapshots = tx.first("SELECT COUNT(*) FROM snapshots WHERE team = ?", rs -> rs.getLong(1), name).orElse(0L);
            long built = tx.first("SELECT COUNT(*) FROM built_templates WHERE team = ?", rs -> rs.getLong(1), name).orElse(0L);
            if (keys > 0 || running > 0 || snapshots > 0 || built > 0) {
                throw StoreException.conflict("team '" + name + "' still has " + keys + " valid API keys, "
                        + running + " running sandboxes, " + snapshots + " snapshots and " + built
                        + " built templates; delete the snapshots and templates first (E2B DELETE /templates/{id} with a "
                        + "key of the team), then revoke its keys");
            }
            tx.update("DELETE FROM teams WHERE name = ?", name);
            TeamLimitStore.deleteTeam(tx, log, name);
            log.record(Kind.TEAM, name, Op.DELETE);
            return null;
        });
    }

    /** Inside a write: creates the team when missing. */
    void ensure(Database.Tx tx, ChangeLog.Recorder log, String name) throws SQLException {
        if (get(tx, name).isEmpty()) {
            insert(tx, log, name, "");
        }
    }

    private void insert(Database.Tx tx, ChangeLog.Recorder log, String name, String description) throws SQLException {
        long version = log.record(Kind.TEAM, name, Op.UPSERT);
        tx.update("INSERT INTO teams (name, description, created_at, resource_version) VALUES (?, ?, ?, ?)",
                name, description, clock.millis(), version);
    }

    private static Optional<Team> get(Database.Tx tx, String name) throws SQLException {
        return tx.first(SELECT + " WHERE name = ?", TeamStore::team, name);
    }

    private static Team team(ResultSet rs) throws SQLException {
        return new Team(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4));
    }
}
