package io.agentbox.manager.store;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * API keys, stored as SHA-256 hashes. Thread-safe.
 *
 * <p>Revocation keeps the row (for audit and so a watch can send the delete) and logs a
 * {@code DELETE} change; expiry is checked on every lookup against the store's clock.
 */
public final class ApiKeyStore {
    private static final String SELECT = "SELECT id, key_hash, team, role, name, created_at, expires_at, revoked_at, "
            + "resource_version FROM api_keys";
    /** Longest plaintext {@link #authenticate} hashes; anything longer cannot be a key. */
    static final int MAX_KEY_LENGTH = 256;

    private final Database db;
    private final ChangeLog changes;
    private final TeamStore teams;
    private final Clock clock;
    /** Every API request authenticates: found keys stay off the database until a key or team changes. */
    private final ChangeCache<String, ApiKeyRecord> byHashCached;

    ApiKeyStore(Database db, ChangeLog changes, TeamStore teams, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.teams = teams;
        this.clock = clock;
        this.byHashCached = new ChangeCache<>(changes, Set.of(ChangeLog.Kind.API_KEY, ChangeLog.Kind.TEAM), ChangeCache.TTL);
    }

    /**
     * Creates a key for {@code team} (creating the team when unknown).
     *
     * @param role        {@code admin} or {@code user}
     * @param name        free-text label, at most 1024 characters; null = empty
     * @param expiresAtMs Unix epoch milliseconds, in the future; null = never expires
     * @return the stored record and the plaintext (shown once)
     * @throws StoreException INVALID_ARGUMENT for a bad team, role, name or expiry
     */
    public CreatedApiKey create(String team, String role, String name, Long expiresAtMs) {
        return insert(team, role, name, expiresAtMs, null);
    }

    /**
     * Stores a key whose plaintext the operator chose (e.g. an admin key from a Kubernetes Secret).
     *
     * @param plaintext {@code e2b_} and 40 lowercase hex characters
     * @throws StoreException INVALID_ARGUMENT for a malformed key, team, role or name; CONFLICT
     *     when the key is already stored
     */
    public CreatedApiKey importKey(String team, String role, String name, String plaintext) {
        if (plaintext == null || !plaintext.matches("e2b_[0-9a-f]{40}")) {
            throw StoreException.invalid("an imported API key must be e2b_ followed by 40 lowercase hex characters");
        }
        return insert(team, role, name, null, plaintext);
    }

    /** Inserts a new key: {@code plaintext}, or fresh random ones until the id is unused. */
    private CreatedApiKey insert(String team, String role, String name, Long expiresAtMs, String plaintext) {
        Checks.name("team", team);
        if (!Principal.ROLE_ADMIN.equals(role) && !Principal.ROLE_USER.equals(role)) {
            throw StoreException.invalid("role must be 'admin' or 'user', got '" + role + "'");
        }
        String label = Checks.text("name", name);
        if (expiresAtMs != null && expiresAtMs <= clock.millis()) {
            throw StoreException.invalid("expiresAt must be in the future");
        }
        return changes.write((tx, log) -> {
            teams.ensure(tx, log, team);
            while (true) {
                String key = plaintext != null ? plaintext : ApiKeys.newKey();
                String hash = ApiKeys.hash(key);
                String id = hash.substring(0, 16);
                if (tx.first("SELECT 1 FROM api_keys WHERE id = ?", rs -> 1, id).isPresent()) {
                    if (plaintext != null) {
                        throw StoreException.conflict("this API key is already stored");
                    }
                    continue; // a 64-bit prefix collision: draw again
                }
                long version = log.record(Kind.API_KEY, id, Op.UPSERT);
                tx.update("INSERT INTO api_keys (id, key_hash, team, role, name, created_at, expires_at, resource_version) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", id, hash, team, role, label, clock.millis(), expiresAtMs, version);
                return new CreatedApiKey(byId(tx, id).orElseThrow(), key);
            }
        });
    }

    /** The principal owning {@code plaintextKey} when the key exists, is not revoked and has not expired. */
    public Optional<Principal> authenticate(String plaintextKey) {
        if (plaintextKey == null || plaintextKey.isEmpty() || plaintextKey.length() > MAX_KEY_LENGTH) {
            return Optional.empty();
        }
        return byHashCached.get(ApiKeys.hash(plaintextKey), this::byHash).filter(k -> k.isValidAt(clock.millis()))
                .map(k -> new Principal(k.team(), k.role()));
    }

    /** The key with this hex SHA-256 hash, whatever its state. */
    public Optional<ApiKeyRecord> byHash(String keyHash) {
        return db.first(SELECT + " WHERE key_hash = ?", ApiKeyStore::key, keyHash);
    }

    public Optional<ApiKeyRecord> byId(String id) {
        return db.first(SELECT + " WHERE id = ?", ApiKeyStore::key, id);
    }

    /** Keys of {@code team} (every team when null), revoked ones included, oldest first. */
    public List<ApiKeyRecord> list(String team) {
        return team == null
                ? db.query(SELECT + " ORDER BY created_at, id", ApiKeyStore::key)
                : db.query(SELECT + " WHERE team = ? ORDER BY created_at, id", ApiKeyStore::key, team);
    }

    /**
     * Revokes a key: every later lookup refuses it.
     *
     * @return the revoked record
     * @throws StoreException NOT_FOUND for an unknown id, CONFLICT when already revoked
     */
    public ApiKeyRecord revoke(String id) {
        return changes.write((tx, log) -> {
            ApiKeyRecord k = byId(tx, id).orElseThrow(() -> StoreException.notFound("API key '" + id + "' not found"));
            if (k.revokedAtMs() != null) {
                throw StoreException.conflict("API key '" + id + "' is already revoked");
            }
            long version = log.record(Kind.API_KEY, id, Op.DELETE);
            tx.update("UPDATE api_keys SET revoked_at = ?, resource_version = ? WHERE id = ?", clock.millis(), version, id);
            return byId(tx, id).orElseThrow();
        });
    }

    /** Whether any valid admin key exists. */
    public boolean hasAdmin() {
        return list(null).stream().anyMatch(k -> Principal.ROLE_ADMIN.equals(k.role()) && k.isValidAt(clock.millis()));
    }

    /**
     * The keys a worker should accept, at one resource version: not revoked (expired keys are
     * included with their expiry, workers check it), sorted by id.
     */
    public Snapshot<ApiKeyRecord> snapshot() {
        return changes.snapshot(tx -> tx.query(SELECT + " WHERE revoked_at IS NULL ORDER BY id", ApiKeyStore::key));
    }

    private static Optional<ApiKeyRecord> byId(Database.Tx tx, String id) throws SQLException {
        return tx.first(SELECT + " WHERE id = ?", ApiKeyStore::key, id);
    }

    private static ApiKeyRecord key(ResultSet rs) throws SQLException {
        return new ApiKeyRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                rs.getLong(6), nullableLong(rs, 7), nullableLong(rs, 8), rs.getLong(9));
    }

    static Long nullableLong(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }
}
