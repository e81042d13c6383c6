package io.agentbox.manager.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.flywaydb.core.Flyway;

/**
 * A pooled JDBC connection to the hub database with its schema migrated, and the few helpers the
 * store's tables share: single statements in auto-commit, and transactions.
 *
 * <p>Thread-safe. Errors: {@link StoreException} (reason FAILED) wrapping the {@link SQLException}.
 */
final class Database implements AutoCloseable {
    /** Most pooled connections; the hub's writes are small and serialized on the version row anyway. */
    static final int MAX_CONNECTIONS = 16;
    static final long CONNECT_TIMEOUT_MS = 10_000;

    private final HikariDataSource pool;
    /**
     * H2 keeps committed changes in memory and writes them to its file from background threads: a
     * hub killed right after a commit lost writes the API had acknowledged (StoreCrashTest). On H2
     * every write therefore ends with CHECKPOINT, which asks H2 to write the store now; that makes
     * the loss much rarer but, as measured, not impossible (docs/architecture.md, "The hub store").
     */
    private final boolean checkpointEachWrite;

    private Database(HikariDataSource pool, boolean checkpointEachWrite) {
        this.pool = pool;
        this.checkpointEachWrite = checkpointEachWrite;
    }

    /** Connects and applies pending migrations from {@code classpath:db/hub}. */
    static Database open(StoreConfig config) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(config.url());
        // unset rather than empty, so the driver's own defaults (e.g. PGUSER-style fallbacks) apply
        if (!config.user().isEmpty()) {
            hc.setUsername(config.user());
        }
        if (!config.password().isEmpty()) {
            hc.setPassword(config.password());
        }
        hc.setMaximumPoolSize(MAX_CONNECTIONS);
        hc.setMinimumIdle(1);
        hc.setConnectionTimeout(CONNECT_TIMEOUT_MS);
        hc.setPoolName("agentbox-store");
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(hc);
        } catch (RuntimeException e) {
            throw new StoreException("cannot connect to the hub store at " + config.url(), e);
        }
        try {
            Flyway.configure().dataSource(pool).locations("classpath:db/hub").load().migrate();
        } catch (RuntimeException e) {
            pool.close();
            throw new StoreException("cannot migrate the hub store at " + config.url(), e);
        }
        return new Database(pool, config.url().startsWith("jdbc:h2:"));
    }

    @FunctionalInterface
    interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    /** Work run inside one transaction; {@link Tx} runs its statements on that transaction. */
    @FunctionalInterface
    interface TxWork<T> {
        T run(Tx tx) throws SQLException;
    }

    /** Statements on one connection in one transaction. */
    static final class Tx {
        private final Connection connection;

        private Tx(Connection connection) {
            this.connection = connection;
        }

        <T> List<T> query(String sql, RowMapper<T> mapper, Object... args) throws SQLException {
            try (PreparedStatement ps = prepare(connection, sql, args); ResultSet rs = ps.executeQuery()) {
                List<T> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(mapper.map(rs));
                }
                return out;
            }
        }

        <T> Optional<T> first(String sql, RowMapper<T> mapper, Object... args) throws SQLException {
            List<T> rows = query(sql, mapper, args);
            return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
        }

        int update(String sql, Object... args) throws SQLException {
            try (PreparedStatement ps = prepare(connection, sql, args)) {
                return ps.executeUpdate();
            }
        }
    }

    /**
     * Runs {@code work} in a transaction: committed when it returns, rolled back when it throws.
     * A {@link StoreException} thrown by the work passes through unchanged.
     */
    <T> T inTransaction(TxWork<T> work) {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                T result = work.run(new Tx(c));
                c.commit();
                persisted(c);
                return result;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new StoreException("hub store transaction failed: " + e.getMessage(), e);
        }
    }

    /** One query in auto-commit. */
    <T> List<T> query(String sql, RowMapper<T> mapper, Object... args) {
        try (Connection c = pool.getConnection()) {
            return new Tx(c).query(sql, mapper, args);
        } catch (SQLException e) {
            throw new StoreException("query failed: " + sql, e);
        }
    }

    <T> Optional<T> first(String sql, RowMapper<T> mapper, Object... args) {
        List<T> rows = query(sql, mapper, args);
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
    }

    /** One statement in auto-commit; returns the updated row count. */
    int update(String sql, Object... args) {
        try (Connection c = pool.getConnection()) {
            int n = new Tx(c).update(sql, args);
            persisted(c);
            return n;
        } catch (SQLException e) {
            throw new StoreException("update failed: " + sql, e);
        }
    }

    /** After a commit on {@code c}: returns once the commit is in the database file (H2; PostgreSQL already is). */
    private void persisted(Connection c) throws SQLException {
        if (checkpointEachWrite) {
            try (var s = c.createStatement()) {
                s.execute("CHECKPOINT");
            }
        }
    }

    private static PreparedStatement prepare(Connection c, String sql, Object... args) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        try {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
