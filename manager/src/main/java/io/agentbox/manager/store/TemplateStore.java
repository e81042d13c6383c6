package io.agentbox.manager.store;

import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.Template;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Templates: the specs workers build warm pools from. Thread-safe.
 *
 * <p>Updates and deletes take an optional expected resource version: when given and the template
 * has changed since, they fail with CONFLICT instead of overwriting someone else's change.
 */
public final class TemplateStore {
    /** Name prefix of the hub templates that serve built templates ({@code built-<build id>}); one team's each. */
    public static final String BUILT_PREFIX = "built-";

    private static final String SELECT = "SELECT name, pool_size, runtime, network, default_timeout_seconds, env_vars, "
            + "cpu_count, memory_mb, disk_size_mb, clusters, created_at, updated_at, resource_version, image, pids_limit, "
            + "snapshot FROM templates";
    /** The template the first migration seeds and the E2B SDKs create from by default. */
    public static final String BUILT_IN = "base";
    static final int MAX_POOL_SIZE = 1000;
    /** Largest defaultTimeoutSeconds: the sandbox lifetime limit hub and worker share. */
    static final int MAX_TIMEOUT_SECONDS = SandboxTimeouts.MAX_SECONDS;
    static final int MAX_CLUSTERS = 256;
    private static final Set<String> RUNTIMES = Set.of("local", "kubernetes");
    /**
     * Network modes: {@code isolated} (own namespace, outbound internet through NAT, nothing of the
     * host reachable), {@code none} (loopback only), {@code host} (the host's network).
     */
    public static final Set<String> NETWORKS = Set.of("isolated", "none", "host");
    /** Network of a template that names none. */
    public static final String DEFAULT_NETWORK = "isolated";
    /** pidsLimit of a template that names none; the runtime applies it per sandbox. */
    public static final int DEFAULT_PIDS_LIMIT = 1024;
    public static final int MAX_PIDS_LIMIT = 65535;

    private final Database db;
    private final ChangeLog changes;
    private final Clock clock;

    TemplateStore(Database db, ChangeLog changes, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.clock = clock;
    }

    /**
     * Creates a template. An empty runtime means {@code local}, an empty network
     * {@value #DEFAULT_NETWORK}, a zero pidsLimit {@value #DEFAULT_PIDS_LIMIT}; the image is stored
     * normalised ({@link ImageReference#toString()}).
     *
     * @throws StoreException INVALID_ARGUMENT for a bad field, CONFLICT when the name exists
     */
    public TemplateRecord create(Template spec, List<String> clusters) {
        Template t = validate(spec, clusters);
        return changes.write((tx, log) -> {
            if (get(tx, t.getName()).isPresent()) {
                throw StoreException.conflict("template '" + t.getName() + "' already exists");
            }
            long version = log.record(Kind.TEMPLATE, t.getName(), Op.UPSERT);
            long now = clock.millis();
            insert(tx, t, clusters, now, version);
            return get(tx, t.getName()).orElseThrow();
        });
    }

    /** Inserts a validated template row (also a snapshot's, from {@link SnapshotStore}). */
    static void insert(Database.Tx tx, Template t, List<String> clusters, long now, long version) throws SQLException {
        tx.update("INSERT INTO templates (name, pool_size, runtime, network, default_timeout_seconds, env_vars, "
                        + "cpu_count, memory_mb, disk_size_mb, clusters, created_at, updated_at, resource_version, "
                        + "image, pids_limit, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                t.getName(), t.getPoolSize(), t.getRuntime(), t.getNetwork(), t.getDefaultTimeoutSeconds(),
                StoreJson.write(t.getEnvVarsMap()), t.getCpuCount(), t.getMemoryMb(), t.getDiskSizeMb(),
                StoreJson.write(clusters), now, now, version, t.getImage(), t.getPidsLimit(), t.getSnapshot());
    }

    /**
     * Replaces a template's spec and cluster list.
     *
     * @param expectedVersion the resource version the caller read; null = overwrite whatever is there
     * @throws StoreException INVALID_ARGUMENT, NOT_FOUND, or CONFLICT when {@code expectedVersion} is stale
     */
    public TemplateRecord update(Template spec, List<String> clusters, Long expectedVersion) {
        Template t = validate(spec, clusters);
        return changes.write((tx, log) -> {
            requireVersion(get(tx, t.getName()), t.getName(), expectedVersion);
            requireNotSnapshot(get(tx, t.getName()).orElseThrow(), t.getSnapshot());
            long version = log.record(Kind.TEMPLATE, t.getName(), Op.UPSERT);
            tx.update("UPDATE templates SET pool_size = ?, runtime = ?, network = ?, default_timeout_seconds = ?, "
                            + "env_vars = ?, cpu_count = ?, memory_mb = ?, disk_size_mb = ?, clusters = ?, updated_at = ?, "
                            + "resource_version = ?, image = ?, pids_limit = ?, snapshot = ? WHERE name = ?",
                    t.getPoolSize(), t.getRuntime(), t.getNetwork(), t.getDefaultTimeoutSeconds(),
                    StoreJson.write(t.getEnvVarsMap()), t.getCpuCount(), t.getMemoryMb(), t.getDiskSizeMb(),
                    StoreJson.write(clusters), clock.millis(), version, t.getImage(), t.getPidsLimit(), t.getSnapshot(), t.getName());
            return get(tx, t.getName()).orElseThrow();
        });
    }

    /** Creates the template, or replaces its spec keeping its cluster list. */
    public TemplateRecord upsert(Template spec) {
        List<String> clusters = get(spec.getName()).map(TemplateRecord::clusters).orElse(List.of());
        return get(spec.getName()).isPresent() ? update(spec, clusters, null) : create(spec, clusters);
    }

    /**
     * Deletes a template (workers drain its pools). The built-in {@value #BUILT_IN} template cannot
     * be deleted: every create that names no template uses it.
     *
     * @throws StoreException NOT_FOUND; CONFLICT for {@value #BUILT_IN}, or when {@code expectedVersion}
     *     is given and stale
     */
    public void delete(String name, Long expectedVersion) {
        if (BUILT_IN.equals(name)) {
            throw StoreException.conflict("template '" + BUILT_IN + "' is built in and cannot be deleted: every "
                    + "sandbox create that names no template uses it; change its poolSize (0 keeps no warm sandboxes) "
                    + "or clusters instead");
        }
        changes.write((tx, log) -> {
            requireVersion(get(tx, name), name, expectedVersion);
            requireNotSnapshot(get(tx, name).orElseThrow(), "");
            tx.update("DELETE FROM templates WHERE name = ?", name);
            log.record(Kind.TEMPLATE, name, Op.DELETE);
            return null;
        });
    }

    public Optional<TemplateRecord> get(String name) {
        return db.first(SELECT + " WHERE name = ?", TemplateStore::template, name);
    }

    /** Every template, sorted by name. */
    public List<TemplateRecord> list() {
        return db.query(SELECT + " ORDER BY name", TemplateStore::template);
    }

    /** Every template at one resource version, sorted by name. */
    public Snapshot<TemplateRecord> snapshot() {
        return changes.snapshot(tx -> tx.query(SELECT + " ORDER BY name", TemplateStore::template));
    }

    /** A snapshot's template changes only through {@link SnapshotStore} (its pool size there too). */
    private static void requireNotSnapshot(TemplateRecord current, String wanted) {
        if (!current.spec().getSnapshot().isEmpty() && !current.spec().getSnapshot().equals(wanted)) {
            throw StoreException.conflict("template '" + current.spec().getName() + "' serves snapshot sandboxes: "
                    + "change it through the snapshot (PUT /internal/snapshots/{id}, DELETE /templates/{id})");
        }
    }

    private static void requireVersion(Optional<TemplateRecord> current, String name, Long expectedVersion) {
        TemplateRecord t = current.orElseThrow(() -> StoreException.notFound("template '" + name + "' not found"));
        if (expectedVersion != null && expectedVersion != t.resourceVersion()) {
            throw StoreException.conflict("template '" + name + "' is at resource version " + t.resourceVersion()
                    + ", not " + expectedVersion + "; read it again and retry");
        }
    }

    /** Checks every field and fills the defaults (runtime local, network isolated, pidsLimit 1024, image normalised). */
    static Template validate(Template spec, List<String> clusters) {
        Checks.name("template name", spec.getName());
        Template.Builder b = spec.toBuilder();
        if (b.getRuntime().isEmpty()) {
            b.setRuntime("local");
        }
        if (b.getNetwork().isEmpty()) {
            b.setNetwork(DEFAULT_NETWORK);
        }
        if (b.getPidsLimit() == 0) {
            b.setPidsLimit(DEFAULT_PIDS_LIMIT);
        }
        if (!b.getSnapshot().isEmpty() && !b.getImage().isEmpty()
                && !b.getImage().startsWith(ImageReference.BUILDS_REGISTRY + "/snapshots/")) {
            throw StoreException.invalid("a snapshot's template has no image but the hub's copy of the snapshot "
                    + "(its sandboxes start from the snapshot)");
        }
        if (!b.getImage().isEmpty()) {
            try {
                b.setImage(ImageReference.parse(b.getImage()).toString());
            } catch (IllegalArgumentException e) {
                throw StoreException.invalid("image: " + e.getMessage());
            }
        }
        if (!RUNTIMES.contains(b.getRuntime())) {
            throw StoreException.invalid("runtime must be one of " + RUNTIMES + ", got '" + b.getRuntime() + "'");
        }
        if (!NETWORKS.contains(b.getNetwork())) {
            throw StoreException.invalid("network must be one of isolated, none, host; got '" + b.getNetwork() + "'");
        }
        Checks.range("pidsLimit", b.getPidsLimit(), 1, MAX_PIDS_LIMIT);
        Checks.range("poolSize", b.getPoolSize(), 0, MAX_POOL_SIZE);
        Checks.range("defaultTimeoutSeconds", b.getDefaultTimeoutSeconds(), 0, MAX_TIMEOUT_SECONDS);
        Checks.range("cpuCount", b.getCpuCount(), 0, 1024);
        Checks.range("memoryMb", b.getMemoryMb(), 0, 16 << 20);
        Checks.range("diskSizeMb", b.getDiskSizeMb(), 0, 1 << 30);
        Checks.stringMap("envVars", b.getEnvVarsMap());
        if (clusters.size() > MAX_CLUSTERS) {
            throw StoreException.invalid("a template targets at most " + MAX_CLUSTERS + " clusters");
        }
        for (String c : clusters) {
            if (!SandboxIds.isValidClusterId(c)) {
                throw StoreException.invalid("invalid cluster id '" + c + "' in clusters");
            }
        }
        return b.build();
    }

    static Optional<TemplateRecord> get(Database.Tx tx, String name) throws SQLException {
        return tx.first(SELECT + " WHERE name = ?", TemplateStore::template, name);
    }

    private static TemplateRecord template(ResultSet rs) throws SQLException {
        Template spec = Template.newBuilder()
                .setName(rs.getString(1))
                .setPoolSize(rs.getInt(2))
                .setRuntime(rs.getString(3))
                .setNetwork(rs.getString(4))
                .setDefaultTimeoutSeconds(rs.getInt(5))
                .putAllEnvVars(StoreJson.stringMap(rs.getString(6)))
                .setCpuCount(rs.getInt(7))
                .setMemoryMb(rs.getInt(8))
                .setDiskSizeMb(rs.getInt(9))
                .setImage(rs.getString(14))
                .setPidsLimit(rs.getInt(15))
                .setSnapshot(rs.getString(16))
                .build();
        return new TemplateRecord(spec, StoreJson.stringList(rs.getString(10)), rs.getLong(11), rs.getLong(12),
                rs.getLong(13));
    }
}
