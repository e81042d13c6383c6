package io.agentbox.manager.store;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import io.agentbox.protocol.SandboxIds;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Registered worker clusters: id, token hash and the config pushed to the worker. Thread-safe.
 *
 * <p>Changing a cluster's config logs a {@code CLUSTER_CONFIG} change; registration, token rotation
 * and removal log {@code CLUSTER} changes.
 */
public final class ClusterStore {
    private static final String SELECT =
            "SELECT id, description, created_at, resource_version, config, config_version FROM clusters";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Database db;
    private final ChangeLog changes;
    private final Clock clock;

    ClusterStore(Database db, ChangeLog changes, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.clock = clock;
    }

    /**
     * Registers a cluster and issues its token.
     *
     * @throws StoreException INVALID_ARGUMENT for a bad id or description, CONFLICT when registered
     */
    public RegisteredCluster register(String id, String description) {
        requireId(id);
        String text = Checks.text("description", description);
        return changes.write((tx, log) -> {
            if (get(tx, id).isPresent()) {
                throw StoreException.conflict("cluster '" + id + "' is already registered");
            }
            String token = newToken();
            long version = log.record(Kind.CLUSTER, id, Op.UPSERT);
            long configVersion = log.record(Kind.CLUSTER_CONFIG, id, Op.UPSERT);
            tx.update("INSERT INTO clusters (id, description, token_hash, config, created_at, resource_version, "
                            + "config_version) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    id, text, ApiKeys.hash(token), StoreJson.write(ClusterConfig.EMPTY), clock.millis(), version,
                    configVersion);
            return new RegisteredCluster(get(tx, id).orElseThrow(), token);
        });
    }

    /**
     * Issues a new token; the old one stops working at once (a connected worker keeps its tunnel).
     *
     * @throws StoreException NOT_FOUND for an unknown cluster
     */
    public RegisteredCluster rotateToken(String id) {
        return changes.write((tx, log) -> {
            requireExisting(tx, id);
            String token = newToken();
            long version = log.record(Kind.CLUSTER, id, Op.UPSERT);
            tx.update("UPDATE clusters SET token_hash = ?, resource_version = ? WHERE id = ?", ApiKeys.hash(token), version, id);
            return new RegisteredCluster(get(tx, id).orElseThrow(), token);
        });
    }

    /** True when {@code token} is the current token of registered cluster {@code id} (constant-time compare). */
    public boolean authenticate(String id, String token) {
        if (id == null || token == null || token.length() > ApiKeyStore.MAX_KEY_LENGTH) {
            return false;
        }
        Optional<String> hash = db.first("SELECT token_hash FROM clusters WHERE id = ?", rs -> rs.getString(1), id);
        return hash.isPresent() && MessageDigest.isEqual(hash.get().getBytes(StandardCharsets.US_ASCII),
                ApiKeys.hash(token).getBytes(StandardCharsets.US_ASCII));
    }

    /** Token hash (hex SHA-256) of every registered cluster, by id; for an in-memory authenticator. */
    public Map<String, String> tokenHashes() {
        Map<String, String> out = new HashMap<>();
        db.query("SELECT id, token_hash FROM clusters", rs -> {
            out.put(rs.getString(1), rs.getString(2));
            return null;
        });
        return out;
    }

    public Optional<ClusterRecord> get(String id) {
        return db.first(SELECT + " WHERE id = ?", ClusterStore::cluster, id);
    }

    /** Every registered cluster, sorted by id. */
    public List<ClusterRecord> list() {
        return db.query(SELECT + " ORDER BY id", ClusterStore::cluster);
    }

    /**
     * Replaces a cluster's config.
     *
     * @param expectedConfigVersion the config version the caller read; null = overwrite
     * @throws StoreException INVALID_ARGUMENT, NOT_FOUND, or CONFLICT when the version is stale
     */
    public ClusterRecord setConfig(String id, ClusterConfig config, Long expectedConfigVersion) {
        ClusterConfig valid = config.validate();
        return changes.write((tx, log) -> {
            ClusterRecord c = requireExisting(tx, id);
            if (expectedConfigVersion != null && expectedConfigVersion != c.configVersion()) {
                throw StoreException.conflict("config of cluster '" + id + "' is at resource version "
                        + c.configVersion() + ", not " + expectedConfigVersion + "; read it again and retry");
            }
            long version = log.record(Kind.CLUSTER_CONFIG, id, Op.UPSERT);
            tx.update("UPDATE clusters SET config = ?, config_version = ? WHERE id = ?", StoreJson.write(valid), version, id);
            return get(tx, id).orElseThrow();
        });
    }

    /**
     * Removes a cluster: its token stops working (a connected worker keeps its tunnel until it drops).
     *
     * @throws StoreException NOT_FOUND for an unknown cluster
     */
    public void delete(String id) {
        changes.write((tx, log) -> {
            requireExisting(tx, id);
            tx.update("DELETE FROM clusters WHERE id = ?", id);
            log.record(Kind.CLUSTER, id, Op.DELETE);
            log.record(Kind.CLUSTER_CONFIG, id, Op.DELETE);
            return null;
        });
    }

    /** Every registered cluster (with its config) at one resource version, sorted by id. */
    public Snapshot<ClusterRecord> snapshot() {
        return changes.snapshot(tx -> tx.query(SELECT + " ORDER BY id", ClusterStore::cluster));
    }

    private static void requireId(String id) {
        if (!SandboxIds.isValidClusterId(id)) {
            throw StoreException.invalid("invalid cluster id '" + id + "': use 1-" + SandboxIds.MAX_CLUSTER_ID_LENGTH
                    + " lowercase letters, digits or '-', starting with a letter or digit");
        }
    }

    private static ClusterRecord requireExisting(Database.Tx tx, String id) throws SQLException {
        return get(tx, id).orElseThrow(() -> StoreException.notFound("cluster '" + id + "' not found"));
    }

    /** 256 random bits as 64 hex chars. */
    private static String newToken() {
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        return HexFormat.of().formatHex(raw);
    }

    private static Optional<ClusterRecord> get(Database.Tx tx, String id) throws SQLException {
        return tx.first(SELECT + " WHERE id = ?", ClusterStore::cluster, id);
    }

    private static ClusterRecord cluster(ResultSet rs) throws SQLException {
        return new ClusterRecord(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4),
                StoreJson.read(rs.getString(5), ClusterConfig.class), rs.getLong(6));
    }
}
