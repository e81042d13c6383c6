package io.agentbox.manager.store;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.Template;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import org.h2.jdbcx.JdbcConnectionPool;

/**
 * The hub's persistent state: API keys (SHA-256 hashes only), templates, sandbox records and
 * hub settings, in an embedded H2 file database at {@code <dataDir>/hub/hub.mv.db}. The schema is
 * managed by Flyway migrations in {@code classpath:db/hub}. Thread-safe (pooled connections).
 *
 * <p>Errors: every method throws {@link StoreException} (unchecked) when the database fails.
 */
public final class HubStore implements AutoCloseable {
    /** File (under the data directory) that receives the first admin key, mode rw-------. */
    public static final String ADMIN_KEY_FILE = "admin-key";
    private static final int MAX_CONNECTIONS = 16;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {};

    private final Path dataDir;
    private final JdbcConnectionPool pool;

    private HubStore(Path dataDir, JdbcConnectionPool pool) {
        this.dataDir = dataDir;
        this.pool = pool;
    }

    /**
     * Opens (creating when absent) the store under {@code dataDir}, applies pending migrations
     * and thereby seeds the {@code base} template on first use.
     */
    public static HubStore open(Path dataDir) {
        try {
            Path dbDir = dataDir.toAbsolutePath().resolve("hub");
            Files.createDirectories(dbDir);
            // key hashes and the envd token secret: readable by the hub's user only
            Files.setPosixFilePermissions(dbDir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
            String url = "jdbc:h2:file:" + dbDir.resolve("hub") + ";DB_CLOSE_ON_EXIT=FALSE";
            JdbcConnectionPool pool = JdbcConnectionPool.create(url, "sa", "");
            pool.setMaxConnections(MAX_CONNECTIONS);
            try {
                Flyway.configure().dataSource(pool).locations("classpath:db/hub").load().migrate();
            } catch (RuntimeException e) {
                pool.dispose();
                throw e;
            }
            return new HubStore(dataDir.toAbsolutePath(), pool);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create hub data directory under " + dataDir, e);
        }
    }

    // ---- API keys ------------------------------------------------------------------------------

    /**
     * Creates the first admin key when the store has none, writes it to
     * {@code <dataDir>/admin-key} (owner read/write only) and returns its plaintext; empty when an
     * admin key already exists (the plaintext of existing keys is unknown to the hub).
     */
    public synchronized Optional<String> ensureAdminKey() {
        Integer admins = query("SELECT COUNT(*) FROM api_keys WHERE role = ?", rs -> rs.getInt(1), Principal.ROLE_ADMIN)
                .get(0);
        if (admins > 0) {
            return Optional.empty();
        }
        String key = createApiKey("admin", Principal.ROLE_ADMIN);
        writeOwnerOnly(dataDir.resolve(ADMIN_KEY_FILE), key + "\n");
        return Optional.of(key);
    }

    /** Creates a key for {@code team} with {@code role}; returns the plaintext (shown once). */
    public String createApiKey(String team, String role) {
        String key = ApiKeys.newKey();
        update("INSERT INTO api_keys (key_hash, team, role, created_at) VALUES (?, ?, ?, ?)",
                ApiKeys.hash(key), team, role, System.currentTimeMillis());
        return key;
    }

    /** The principal owning {@code plaintextKey}, looked up by its SHA-256 hash. */
    public Optional<Principal> authenticate(String plaintextKey) {
        if (plaintextKey == null || plaintextKey.isEmpty() || plaintextKey.length() > 256) {
            return Optional.empty();
        }
        return first(query("SELECT team, role FROM api_keys WHERE key_hash = ?",
                rs -> new Principal(rs.getString(1), rs.getString(2)), ApiKeys.hash(plaintextKey)));
    }

    // ---- templates -----------------------------------------------------------------------------

    /** Every template, sorted by name. */
    public List<Template> templates() {
        return query("SELECT name, pool_size, network, default_timeout_seconds, runtime FROM templates ORDER BY name",
                HubStore::template);
    }

    public Optional<Template> template(String name) {
        return first(query("SELECT name, pool_size, network, default_timeout_seconds, runtime FROM templates WHERE name = ?",
                HubStore::template, name));
    }

    /** Inserts or replaces a template (name, pool size, network, default timeout, runtime; empty runtime = local). */
    public void upsertTemplate(Template t) {
        update("MERGE INTO templates (name, pool_size, network, default_timeout_seconds, created_at, runtime) KEY (name) "
                        + "VALUES (?, ?, ?, ?, ?, ?)",
                t.getName(), t.getPoolSize(), t.getNetwork().isEmpty() ? "host" : t.getNetwork(),
                t.getDefaultTimeoutSeconds(), System.currentTimeMillis(), t.getRuntime().isEmpty() ? "local" : t.getRuntime());
    }

    private static Template template(ResultSet rs) throws SQLException {
        return Template.newBuilder()
                .setName(rs.getString(1))
                .setPoolSize(rs.getInt(2))
                .setRuntime(rs.getString(5))
                .setNetwork(rs.getString(3))
                .setDefaultTimeoutSeconds(rs.getInt(4))
                .build();
    }

    // ---- sandboxes -----------------------------------------------------------------------------

    public void insertSandbox(SandboxRecord r) {
        update("INSERT INTO sandboxes (sandbox_id, cluster_id, template, team, metadata, created_at, end_at, ended, end_reason) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                r.sandboxId(), r.clusterId(), r.template(), r.team(), toJson(r.metadata()), r.createdAtMs(),
                r.endAtMs(), r.ended(), r.endReason());
    }

    public Optional<SandboxRecord> sandbox(String sandboxId) {
        return first(query(SELECT_SANDBOX + " WHERE sandbox_id = ?", HubStore::sandbox, sandboxId));
    }

    /** Sandboxes of {@code team} (every team when null) that have not ended, oldest first. */
    public List<SandboxRecord> activeSandboxes(String team) {
        if (team == null) {
            return query(SELECT_SANDBOX + " WHERE ended = FALSE ORDER BY created_at", HubStore::sandbox);
        }
        return query(SELECT_SANDBOX + " WHERE team = ? AND ended = FALSE ORDER BY created_at", HubStore::sandbox, team);
    }

    public void updateEndAt(String sandboxId, long endAtMs) {
        update("UPDATE sandboxes SET end_at = ? WHERE sandbox_id = ?", endAtMs, sandboxId);
    }

    /** Marks a sandbox ended; returns false when it was unknown or had already ended. */
    public boolean markEnded(String sandboxId, String reason) {
        return update("UPDATE sandboxes SET ended = TRUE, end_reason = ?, end_at = LEAST(end_at, ?) "
                + "WHERE sandbox_id = ? AND ended = FALSE", reason, System.currentTimeMillis(), sandboxId) > 0;
    }

    private static final String SELECT_SANDBOX =
            "SELECT sandbox_id, cluster_id, template, team, metadata, created_at, end_at, ended, end_reason FROM sandboxes";

    private static SandboxRecord sandbox(ResultSet rs) throws SQLException {
        return new SandboxRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                fromJson(rs.getString(5)), rs.getLong(6), rs.getLong(7), rs.getBoolean(8), rs.getString(9));
    }

    // ---- settings ------------------------------------------------------------------------------

    /**
     * A hub-wide random secret (32 bytes) stored under {@code name}, created on first use. Used to
     * derive envd access tokens so they survive hub restarts.
     */
    public synchronized byte[] secret(String name) {
        Optional<String> existing = first(query("SELECT val FROM hub_settings WHERE name = ?", rs -> rs.getString(1), name));
        if (existing.isPresent()) {
            return HexFormat.of().parseHex(existing.get());
        }
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        update("INSERT INTO hub_settings (name, val) VALUES (?, ?)", name, HexFormat.of().formatHex(secret));
        return secret;
    }

    @Override
    public void close() {
        pool.dispose();
    }

    // ---- JDBC plumbing -------------------------------------------------------------------------

    @FunctionalInterface
    private interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private <T> List<T> query(String sql, RowMapper<T> mapper, Object... args) {
        try (Connection c = pool.getConnection(); PreparedStatement ps = prepare(c, sql, args);
             ResultSet rs = ps.executeQuery()) {
            List<T> out = new ArrayList<>();
            while (rs.next()) {
                out.add(mapper.map(rs));
            }
            return out;
        } catch (SQLException e) {
            throw new StoreException("query failed: " + sql, e);
        }
    }

    private int update(String sql, Object... args) {
        try (Connection c = pool.getConnection(); PreparedStatement ps = prepare(c, sql, args)) {
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new StoreException("update failed: " + sql, e);
        }
    }

    private static PreparedStatement prepare(Connection c, String sql, Object... args) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
        return ps;
    }

    private static <T> Optional<T> first(List<T> rows) {
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
    }

    private static String toJson(Map<String, String> map) {
        try {
            return JSON.writeValueAsString(map);
        } catch (IOException e) {
            throw new StoreException("cannot encode metadata", e);
        }
    }

    private static Map<String, String> fromJson(String json) {
        try {
            return JSON.readValue(json, STRING_MAP);
        } catch (IOException e) {
            throw new StoreException("corrupt metadata column: " + json, e);
        }
    }

    private static void writeOwnerOnly(Path file, String content) {
        try {
            Files.deleteIfExists(file);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException notPosix) {
                Files.createFile(file);
            }
            Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
