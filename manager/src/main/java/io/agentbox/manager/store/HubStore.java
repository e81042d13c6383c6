package io.agentbox.manager.store;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.Template;
import java.nio.charset.StandardCharsets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The hub's persistent state: API keys (SHA-256 hashes only), teams, templates, clusters (token
 * hashes), sandbox records and history, and hub settings. Backed by H2 (embedded file database
 * at {@code <dataDir>/hub/hub.mv.db}, the default) or PostgreSQL, see {@link StoreConfig}; the
 * schema is managed by Flyway migrations in {@code classpath:db/hub} that run on both.
 *
 * <p>The tables are reached through {@link #apiKeyStore()}, {@link #teamStore()}, {@link #teamLimitStore()},
 * {@link #templateStore()}, {@link #clusterStore()}, {@link #sandboxStore()}; every change of keys,
 * teams, templates and clusters gets a hub-wide resource version, see {@link #changeLog()}. The
 * remaining methods are shortcuts the public API uses.
 *
 * <p>Thread-safe. Errors: {@link StoreException}, whose reason tells bad input, unknown ids and
 * conflicts from database failures.
 */
public final class HubStore implements AutoCloseable, ApiStore {
    /** File (under the data directory) that receives the first admin key, mode rw-------. */
    public static final String ADMIN_KEY_FILE = "admin-key";
    /** File (under the data directory) that receives the manager token, mode rw-------. */
    public static final String MANAGER_TOKEN_FILE = "manager-token";
    private static final String MANAGER_TOKEN_SETTING = "manager-token-sha256";

    private final Path dataDir;
    private final Database db;
    private final ChangeLog changes;
    private final TeamStore teams;
    private final TeamLimitStore teamLimits;
    private final ApiKeyStore apiKeys;
    private final TemplateStore templates;
    private final TemplateBuildStore builds;
    private final SnapshotStore snapshots;
    private final ClusterStore clusters;
    private final SandboxStore sandboxes;
    private final Clock clock;
    private SandboxWriteBehind writeBehind;
    /** The server of the embedded default store, stopped after the pool in {@link #close()}; null otherwise. */
    private EmbeddedPostgresStore embeddedServer;
    /** Most API requests resolve a template: found ones stay off the database until templates change. */
    private final ChangeCache<String, Template> templateByName;

    private HubStore(Path dataDir, Database db, Clock clock) {
        this.dataDir = dataDir;
        this.db = db;
        this.changes = new ChangeLog(db, clock);
        this.teams = new TeamStore(db, changes, clock);
        this.teamLimits = new TeamLimitStore(db, changes, clock);
        this.apiKeys = new ApiKeyStore(db, changes, teams, clock);
        this.templates = new TemplateStore(db, changes, clock);
        this.builds = new TemplateBuildStore(db, clock);
        this.snapshots = new SnapshotStore(db, changes, clock);
        this.clusters = new ClusterStore(db, changes, clock);
        this.sandboxes = new SandboxStore(db, clock);
        this.clock = clock;
        this.templateByName = new ChangeCache<>(changes, Set.of(ChangeLog.Kind.TEMPLATE), ChangeCache.TTL);
    }

    /** Opens the embedded default store under {@code dataDir}, see {@link #open(StoreConfig, Path, Clock)}. */
    public static HubStore open(Path dataDir) {
        return open(StoreConfig.embedded(dataDir), dataDir, Clock.systemUTC());
    }

    /**
     * Connects to the store (creating the H2 file when absent) and applies pending migrations,
     * which seed the {@code base} template on first use.
     *
     * @param dataDir where the admin key and manager token files go (and the H2 database for {@link StoreConfig#h2})
     * @param clock   time source for creation times and key expiry
     * @throws StoreException FAILED when the database cannot be reached or migrated
     */
    public static HubStore open(StoreConfig config, Path dataDir, Clock clock) {
        Path dir = dataDir.toAbsolutePath();
        try {
            // before any database write: the admin key and manager token files must be writable there
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the data directory " + dir, e);
        }
        if (config.isH2File()) {
            // key hashes and the envd token secret: readable by the hub's user only
            OwnerOnlyFiles.directory(dir.resolve(StoreConfig.H2_DIR));
        }
        if (config.isEmbeddedPostgres()) {
            EmbeddedPostgresStore server = EmbeddedPostgresStore.start(config.embeddedDir());
            try {
                HubStore store = new HubStore(dir, Database.open(server.jdbcConfig()), clock);
                store.embeddedServer = server;
                return store;
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
        }
        return new HubStore(dir, Database.open(config), clock);
    }

    public ChangeLog changeLog() {
        return changes;
    }

    public TeamStore teamStore() {
        return teams;
    }

    /** Per-team quotas and their hub-wide defaults. */
    public TeamLimitStore teamLimitStore() {
        return teamLimits;
    }

    public ApiKeyStore apiKeyStore() {
        return apiKeys;
    }

    /** Templates built with the E2B SDK: builds, logs, tags. */
    public TemplateBuildStore templateBuildStore() {
        return builds;
    }

    /** Snapshots of sandboxes and the templates serving them. */
    public SnapshotStore snapshotStore() {
        return snapshots;
    }

    @Override
    public Optional<SnapshotStore> snapshots() {
        return Optional.of(snapshots);
    }

    public TemplateStore templateStore() {
        return templates;
    }

    public ClusterStore clusterStore() {
        return clusters;
    }

    public SandboxStore sandboxStore() {
        return sandboxes;
    }

    // ---- API keys ------------------------------------------------------------------------------

    /**
     * Creates the first admin key when the store has never had one, writes it to
     * {@code <dataDir>/admin-key} (owner read/write only) and returns its plaintext; empty when an
     * admin key was created before (the plaintext of existing keys is unknown to the hub).
     */
    public synchronized Optional<String> ensureAdminKey() {
        return ensureAdminKey(null);
    }

    /**
     * As {@link #ensureAdminKey()}, but with {@code preset} (the operator's key, e.g. from a Secret;
     * null for none) stored as an admin key when it is not stored yet, instead of a random first key.
     * A preset key is never printed or written to a file.
     *
     * @throws StoreException INVALID_ARGUMENT for a malformed preset key
     */
    public synchronized Optional<String> ensureAdminKey(String preset) {
        if (preset != null) {
            if (apiKeys.byHash(ApiKeys.hash(preset)).isEmpty()) {
                apiKeys.importKey("admin", Principal.ROLE_ADMIN, "preset admin key", preset);
            }
            return Optional.empty();
        }
        if (apiKeys.list(null).stream().anyMatch(k -> Principal.ROLE_ADMIN.equals(k.role()))) {
            return Optional.empty();
        }
        String key = apiKeys.create("admin", Principal.ROLE_ADMIN, "first admin key", null).plaintext();
        OwnerOnlyFiles.write(dataDir.resolve(ADMIN_KEY_FILE), key + "\n");
        return Optional.of(key);
    }

    /** Creates a key for {@code team} with {@code role}; returns the plaintext (shown once). */
    public String createApiKey(String team, String role) {
        return apiKeys.create(team, role, "", null).plaintext();
    }

    /** The principal owning {@code plaintextKey} (valid keys only), looked up by its SHA-256 hash. */
    public Optional<Principal> authenticate(String plaintextKey) {
        return apiKeys.authenticate(plaintextKey);
    }

    // ---- manager token -------------------------------------------------------------------------

    /**
     * Creates the management API token when the store has none, writes it to
     * {@code <dataDir>/manager-token} (owner read/write only) and returns its plaintext; empty
     * when one exists. Only its SHA-256 is stored.
     */
    public synchronized Optional<String> ensureManagerToken() {
        if (setting(MANAGER_TOKEN_SETTING).isPresent()) {
            return Optional.empty();
        }
        byte[] raw = new byte[32];
        new SecureRandom().nextBytes(raw);
        String token = "abm_" + HexFormat.of().formatHex(raw);
        db.update("INSERT INTO hub_settings (name, val) VALUES (?, ?)", MANAGER_TOKEN_SETTING, ApiKeys.hash(token));
        OwnerOnlyFiles.write(dataDir.resolve(MANAGER_TOKEN_FILE), token + "\n");
        return Optional.of(token);
    }

    /** True when {@code token} is the management API token (constant-time compare of hashes). */
    public boolean isManagerToken(String token) {
        if (token == null || token.isEmpty() || token.length() > ApiKeyStore.MAX_KEY_LENGTH) {
            return false;
        }
        return setting(MANAGER_TOKEN_SETTING).map(h -> MessageDigest.isEqual(h.getBytes(StandardCharsets.US_ASCII),
                ApiKeys.hash(token).getBytes(StandardCharsets.US_ASCII))).orElse(false);
    }

    // ---- templates -----------------------------------------------------------------------------

    /**
     * Every template's spec, sorted by name; not the templates serving snapshots (those belong to
     * a team and are reached through {@link #snapshotStore()}).
     */
    public List<Template> templates() {
        return templates.list().stream().map(TemplateRecord::spec).filter(HubStore::configured).toList();
    }

    /**
     * Whether {@code t} is a template configured on the hub, which every team may use; the ones
     * serving a snapshot or a built template belong to one team and are reached through that
     * team's snapshot or build records only (an API key of another team must not start them by
     * their internal name).
     */
    private static boolean configured(Template t) {
        return t.getSnapshot().isEmpty() && !t.getName().startsWith(TemplateStore.BUILT_PREFIX);
    }

    /** A template by name; never one serving a snapshot or a built template (see {@link #configured}). */
    public Optional<Template> template(String name) {
        return templateByName.get(name, n -> templates.get(n).map(TemplateRecord::spec)).filter(HubStore::configured);
    }

    /** Inserts or replaces a template's spec (keeping its cluster list). */
    public void upsertTemplate(Template t) {
        templates.upsert(t);
    }

    // ---- sandboxes -----------------------------------------------------------------------------

    public void insertSandbox(SandboxRecord r) {
        sandboxes.insert(r);
    }

    public Optional<SandboxRecord> sandbox(String sandboxId) {
        return sandboxes.get(sandboxId);
    }

    /** Sandboxes of {@code team} (every team when null) that have not ended, oldest first. */
    public List<SandboxRecord> activeSandboxes(String team) {
        return sandboxes.active(team);
    }

    public void updateEndAt(String sandboxId, long endAtMs) {
        sandboxes.updateEndAt(sandboxId, endAtMs);
    }

    /** Marks a running sandbox paused at {@code atMs}; false when it is unknown, ended or paused already. */
    public boolean markPaused(String sandboxId, long atMs) {
        return sandboxes.markPaused(sandboxId, atMs);
    }

    /** Marks a paused sandbox running again with deadline {@code endAtMs}; false when unknown, ended or not paused. */
    public boolean markResumed(String sandboxId, long endAtMs) {
        return sandboxes.markResumed(sandboxId, endAtMs);
    }

    /** Marks a sandbox ended; returns false when it was unknown or had already ended. */
    public boolean markEnded(String sandboxId, String reason) {
        return sandboxes.markEnded(sandboxId, reason);
    }

    // ---- settings ------------------------------------------------------------------------------

    /**
     * A hub-wide random secret (32 bytes) stored under {@code name}, created on first use. Used to
     * derive envd access tokens so they survive hub restarts.
     */
    public synchronized byte[] secret(String name) {
        Optional<String> existing = setting(name);
        if (existing.isPresent()) {
            return HexFormat.of().parseHex(existing.get());
        }
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        db.update("INSERT INTO hub_settings (name, val) VALUES (?, ?)", name, HexFormat.of().formatHex(secret));
        return secret;
    }

    private Optional<String> setting(String name) {
        return db.first("SELECT val FROM hub_settings WHERE name = ?", rs -> rs.getString(1), name);
    }

    /**
     * The public API's view of this store: the same keys, templates and secrets, with sandbox
     * records written behind in batches ({@link SandboxWriteBehind}); created on first use,
     * flushed and stopped by {@link #close()}.
     */
    public synchronized ApiStore writeBehindApi() {
        if (writeBehind == null) {
            writeBehind = new SandboxWriteBehind(sandboxes, clock);
        }
        SandboxWriteBehind records = writeBehind;
        HubStore self = this;
        return new ApiStore() {
            @Override
            public Optional<Principal> authenticate(String plaintextKey) {
                return self.authenticate(plaintextKey);
            }

            @Override
            public List<Template> templates() {
                return self.templates();
            }

            @Override
            public Optional<SnapshotStore> snapshots() {
                return self.snapshots();
            }

            @Override
            public Optional<Template> template(String name) {
                return self.template(name);
            }

            @Override
            public void insertSandbox(SandboxRecord r) {
                records.insert(r);
            }

            @Override
            public void insertCreatedSandbox(SandboxRecord r) {
                records.insertCreated(r);
            }

            @Override
            public Optional<SandboxRecord> sandbox(String sandboxId) {
                return records.get(sandboxId);
            }

            @Override
            public List<SandboxRecord> activeSandboxes(String team) {
                return records.active(team);
            }

            @Override
            public void updateEndAt(String sandboxId, long endAtMs) {
                records.updateEndAt(sandboxId, endAtMs);
            }

            @Override
            public boolean markEnded(String sandboxId, String reason) {
                return records.markEnded(sandboxId, reason);
            }

            @Override
            public boolean markPaused(String sandboxId, long atMs) {
                return records.markPaused(sandboxId, atMs);
            }

            @Override
            public boolean markResumed(String sandboxId, long endAtMs) {
                return records.markResumed(sandboxId, endAtMs);
            }

            @Override
            public byte[] secret(String name) {
                return self.secret(name);
            }
        };
    }

    @Override
    public void close() {
        synchronized (this) {
            if (writeBehind != null) {
                writeBehind.close();
            }
        }
        db.close();
        if (embeddedServer != null) {
            embeddedServer.close();
        }
    }
}
