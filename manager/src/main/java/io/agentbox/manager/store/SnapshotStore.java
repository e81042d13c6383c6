package io.agentbox.manager.store;

import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import io.agentbox.protocol.v1.Template;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Snapshots of sandboxes (migration V7; docs/e2b-wire.md#snapshots, docs/snapshots-and-reset.md):
 * which team owns each, the sandbox it was taken of, the cluster whose image store holds it, its
 * E2B names, and the hub template that serves it. Thread-safe; every method is one transaction.
 *
 * <p>A snapshot template has an E2B template id and, when named, an alias unique per team; every
 * tag of it is one snapshot (a name taken again with a tag it has replaces that tag's snapshot, with
 * a new tag adds one). Each snapshot is served by its own row in {@code templates}
 * ({@link Template#getSnapshot()} set, pinned to the cluster that made it until the hub holds a
 * copy of it, then on every cluster: {@link #serveFromHub}), so the template watch brings it to
 * workers like any template; this store writes and deletes that row in the same transaction and
 * records the change for the watch.
 */
public final class SnapshotStore {
    /** Most snapshots one listing page holds (E2B: default and maximum 100, docs/e2b-wire.md#listing-snapshots). */
    public static final int MAX_PAGE = 100;
    private static final String COLUMNS = "template_id, tag, team, alias, source_sandbox, cluster_id, template_name, created_at";

    /**
     * One snapshot.
     *
     * @param alias the E2B name without namespace and tag; empty for an unnamed snapshot
     * @param templateName the hub template serving it, also the worker's snapshot id
     */
    public record Snap(String templateId, String tag, String team, String alias, String sourceSandbox, String clusterId,
                       String templateName, long createdAtMs) {
        /** E2B's snapshot id (docs/e2b-wire.md#creating-a-snapshot): {@code <templateId>:<tag>} unnamed, {@code <team>/<alias>:<tag>} named. */
        public String snapshotId() {
            return (alias.isEmpty() ? templateId : team + "/" + alias) + ":" + tag;
        }

        /** E2B's {@code names}: empty unnamed, {@code [<team>/<alias>]} named. */
        public List<String> names() {
            return alias.isEmpty() ? List.of() : List.of(team + "/" + alias);
        }
    }

    /** A new snapshot, and the one of the same name and tag it replaced (its worker image is to be deleted). */
    public record Created(Snap snap, Optional<Snap> replaced) {}

    private final Database db;
    private final ChangeLog changes;
    private final Clock clock;

    SnapshotStore(Database db, ChangeLog changes, Clock clock) {
        this.db = db;
        this.changes = changes;
        this.clock = clock;
    }

    /**
     * Records a snapshot of {@code team}'s sandbox {@code sourceSandbox}, taken on {@code clusterId},
     * with its serving template {@code template} (name, snapshot and shape set by the caller; it is
     * pinned to {@code clusterId}).
     *
     * @param alias empty for an unnamed snapshot (a new template id); else the team's snapshot
     *     template of that alias, made when missing
     * @param newTemplateId a fresh E2B template id, used when a new snapshot template is made
     * @throws StoreException INVALID_ARGUMENT for a bad template field
     */
    public Created create(String team, String alias, String tag, String sourceSandbox, String clusterId, Template template,
                          Supplier<String> newTemplateId) {
        Template t = TemplateStore.validate(template, List.of(clusterId));
        if (t.getSnapshot().isEmpty()) {
            throw StoreException.invalid("a snapshot's template needs its snapshot id");
        }
        return changes.write((tx, log) -> {
            String templateId = alias.isEmpty() ? null : tx.first("SELECT template_id FROM snapshots WHERE team = ? AND alias = ?",
                    rs -> rs.getString(1), team, alias).orElse(null);
            if (templateId == null) {
                templateId = newTemplateId.get();
            }
            Optional<Snap> replaced = tx.first("SELECT " + COLUMNS + " FROM snapshots WHERE template_id = ? AND tag = ?",
                    SnapshotStore::snap, templateId, tag);
            if (replaced.isPresent()) {
                remove(tx, log, replaced.get());
            }
            long now = clock.millis();
            TemplateStore.insert(tx, t, List.of(clusterId), now, log.record(Kind.TEMPLATE, t.getName(), Op.UPSERT));
            tx.update("INSERT INTO snapshots (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)", templateId, tag, team, alias,
                    sourceSandbox, clusterId, t.getName(), now);
            return new Created(new Snap(templateId, tag, team, alias, sourceSandbox, clusterId, t.getName(), now), replaced);
        });
    }

    /** The team's snapshot of {@code idOrAlias} (a template id or an alias) with {@code tag}. */
    public Optional<Snap> find(String team, String idOrAlias, String tag) {
        return db.first("SELECT " + COLUMNS + " FROM snapshots WHERE team = ? AND (template_id = ? OR alias = ?) AND tag = ?",
                SnapshotStore::snap, team, idOrAlias, idOrAlias, tag);
    }

    /** The spec of any template by name, snapshots' serving templates included (to copy a sandbox's shape). */
    public Optional<Template> templateSpec(String name) {
        return db.first("SELECT name FROM templates WHERE name = ?", rs -> rs.getString(1), name)
                .flatMap(n -> new TemplateStore(db, changes, clock).get(n)).map(TemplateRecord::spec);
    }

    /**
     * Any team's snapshot by its E2B id as {@link Snap#snapshotId()} writes it ({@code <templateId>:<tag>}
     * or {@code <team>/<alias>:<tag>}), for the management API; empty for any other string.
     */
    public Optional<Snap> bySnapshotId(String snapshotId) {
        int colon = snapshotId.lastIndexOf(':');
        if (colon <= 0) {
            return Optional.empty();
        }
        String tag = snapshotId.substring(colon + 1);
        String name = snapshotId.substring(0, colon);
        int slash = name.indexOf('/');
        if (slash < 0) {
            return db.first("SELECT " + COLUMNS + " FROM snapshots WHERE alias = '' AND template_id = ? AND tag = ?",
                    SnapshotStore::snap, name, tag);
        }
        return db.first("SELECT " + COLUMNS + " FROM snapshots WHERE team = ? AND alias = ? AND tag = ?", SnapshotStore::snap,
                name.substring(0, slash), name.substring(slash + 1), tag);
    }

    /** The snapshot served by the hub template {@code templateName} ({@link Snap#templateName()}). */
    public Optional<Snap> byTemplateName(String templateName) {
        return db.first("SELECT " + COLUMNS + " FROM snapshots WHERE template_name = ?", SnapshotStore::snap, templateName);
    }

    /** Every team's snapshots, newest first, at most {@link #MAX_PAGE} from {@code offset} (management API). */
    public List<Snap> listAll(int offset) {
        return db.query("SELECT " + COLUMNS + " FROM snapshots ORDER BY created_at DESC, template_id, tag LIMIT ? OFFSET ?",
                SnapshotStore::snap, MAX_PAGE, Math.max(0, offset));
    }

    /**
     * The team's snapshots, newest first.
     *
     * @param sourceSandbox only those taken of this sandbox; null for all
     * @param idOrAlias only those of this template id or alias; null for all
     * @param tag with {@code idOrAlias}: only this tag; null for any
     * @param offset rows skipped; {@code limit} 1..{@link #MAX_PAGE}
     */
    public List<Snap> list(String team, String sourceSandbox, String idOrAlias, String tag, int offset, int limit) {
        StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM snapshots WHERE team = ?");
        List<Object> args = new ArrayList<>(List.of(team));
        if (sourceSandbox != null) {
            sql.append(" AND source_sandbox = ?");
            args.add(sourceSandbox);
        }
        if (idOrAlias != null) {
            sql.append(" AND (template_id = ? OR alias = ?)");
            args.add(idOrAlias);
            args.add(idOrAlias);
            if (tag != null) {
                sql.append(" AND tag = ?");
                args.add(tag);
            }
        }
        sql.append(" ORDER BY created_at DESC, template_id, tag LIMIT ? OFFSET ?");
        args.add(Math.max(1, Math.min(limit, MAX_PAGE)));
        args.add(Math.max(0, offset));
        return db.query(sql.toString(), SnapshotStore::snap, args.toArray());
    }

    /**
     * Deletes the team's snapshots of {@code idOrAlias}: the one tag given, or every tag when
     * {@code tag} is null; their serving templates go too (workers drain those pools; sandboxes
     * already running from them keep running).
     *
     * @return what was deleted (empty: nothing matched)
     */
    public List<Snap> delete(String team, String idOrAlias, String tag) {
        return changes.write((tx, log) -> {
            List<Snap> gone = tx.query("SELECT " + COLUMNS + " FROM snapshots WHERE team = ? AND (template_id = ? OR alias = ?)"
                    + (tag == null ? "" : " AND tag = ?"), SnapshotStore::snap,
                    tag == null ? new Object[] {team, idOrAlias, idOrAlias} : new Object[] {team, idOrAlias, idOrAlias, tag});
            for (Snap s : gone) {
                remove(tx, log, s);
            }
            return gone;
        });
    }

    /**
     * Sets the warm pool size of a snapshot's serving template (0..1000); the template watch brings
     * it to the cluster that holds the snapshot.
     *
     * @throws StoreException INVALID_ARGUMENT out of range, NOT_FOUND without that template
     */
    public TemplateRecord setPoolSize(Snap snap, int poolSize) {
        Checks.range("poolSize", poolSize, 0, TemplateStore.MAX_POOL_SIZE);
        return changes.write((tx, log) -> {
            if (TemplateStore.get(tx, snap.templateName()).isEmpty()) {
                throw StoreException.notFound("snapshot " + snap.snapshotId() + " not found");
            }
            long version = log.record(Kind.TEMPLATE, snap.templateName(), Op.UPSERT);
            tx.update("UPDATE templates SET pool_size = ?, updated_at = ?, resource_version = ? WHERE name = ?", poolSize,
                    clock.millis(), version, snap.templateName());
            return TemplateStore.get(tx, snap.templateName()).orElseThrow();
        });
    }

    /**
     * Serves a snapshot from the hub's copy of its image (docs/snapshots-and-reset.md, "Across
     * clusters"): its template gets {@code image} (under {@code builds.agentbox.internal/snapshots/},
     * pinned to the manifest digest) and every cluster, so the template watch brings it to every
     * worker and one without the snapshot pulls the image from the hub. The snapshot keeps its
     * cluster (where it was made, where its worker copy is deleted).
     *
     * @return false when the snapshot was deleted or replaced meanwhile (nothing changed)
     * @throws StoreException INVALID_ARGUMENT for an image outside that form
     */
    public boolean serveFromHub(Snap snap, String image) {
        return changes.write((tx, log) -> {
            boolean current = tx.first("SELECT template_name FROM snapshots WHERE template_id = ? AND tag = ? AND template_name = ?",
                    rs -> rs.getString(1), snap.templateId(), snap.tag(), snap.templateName()).isPresent();
            Optional<TemplateRecord> t = current ? TemplateStore.get(tx, snap.templateName()) : Optional.empty();
            if (t.isEmpty()) {
                return false;
            }
            Template spec = TemplateStore.validate(t.get().spec().toBuilder().setImage(image).build(), List.of());
            long version = log.record(Kind.TEMPLATE, snap.templateName(), Op.UPSERT);
            tx.update("UPDATE templates SET image = ?, clusters = ?, updated_at = ?, resource_version = ? WHERE name = ?",
                    spec.getImage(), StoreJson.write(List.of()), clock.millis(), version, snap.templateName());
            return true;
        });
    }

    private static void remove(Database.Tx tx, ChangeLog.Recorder log, Snap s) throws SQLException {
        tx.update("DELETE FROM snapshots WHERE template_id = ? AND tag = ?", s.templateId(), s.tag());
        if (tx.update("DELETE FROM templates WHERE name = ?", s.templateName()) > 0) {
            log.record(Kind.TEMPLATE, s.templateName(), Op.DELETE);
        }
    }

    private static Snap snap(ResultSet rs) throws SQLException {
        return new Snap(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6),
                rs.getString(7), rs.getLong(8));
    }
}
