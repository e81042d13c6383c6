package io.agentbox.manager.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Templates built with the E2B SDK ({@code Template.build}): which team owns each and under what
 * name, every build with its status and log, and the tags that point at builds
 * (docs/e2b-wire.md#template-builds; docs/template-builds.md). Thread-safe; every method is one
 * transaction.
 *
 * <p>Status moves {@code waiting} → {@code building} → {@code ready} or {@code error}, never back.
 * A build that becomes ready takes the tags it was requested with (moving them from older builds);
 * a failed one leaves every tag where it was. Listeners ({@link #addListener}) hear of every status
 * change after its commit.
 */
public final class TemplateBuildStore {
    public static final String WAITING = "waiting";
    public static final String BUILDING = "building";
    public static final String READY = "ready";
    public static final String ERROR = "error";
    /** Log entries kept per build; later ones are counted in {@link Build#logCount()} and dropped. */
    public static final int MAX_LOG_ENTRIES = 20_000;
    static final int MAX_MESSAGE_CHARS = 4096;
    private static final String BUILD_COLUMNS = "build_id, template_id, status, tags, cpu_count, memory_mb, image, cluster_id, "
            + "reason_message, reason_step, log_count, created_at, updated_at, finished_at";

    /** A built template: its id, owner and E2B name (alias without namespace and tag). */
    public record BuiltTemplate(String templateId, String team, String alias, long createdAtMs, long updatedAtMs) {}

    /**
     * One build.
     *
     * @param tags the tags it takes (or took) once ready
     * @param image the built image's reference once ready, else empty
     * @param reasonMessage with status error: why, else null
     * @param reasonStep with status error: the step ("base", "1".., "finalize"), may be null
     * @param logCount log entries received (those past {@link #MAX_LOG_ENTRIES} are not kept)
     * @param finishedAtMs when it became ready or failed, else null
     */
    public record Build(String buildId, String templateId, String status, List<String> tags, int cpuCount, int memoryMb,
                        String image, String clusterId, String reasonMessage, String reasonStep, int logCount,
                        long createdAtMs, long updatedAtMs, Long finishedAtMs) {
        public Build {
            tags = List.copyOf(tags);
        }
    }

    /** One log entry; {@code step} is empty for lines of the whole build. */
    public record LogEntry(long atMs, String level, String step, String message) {}

    /** A tag and the build it points at. */
    public record Tag(String tag, String buildId, long createdAtMs) {}

    private final Database db;
    private final Clock clock;
    private final List<Consumer<Build>> listeners = new CopyOnWriteArrayList<>();

    TemplateBuildStore(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /**
     * Requests a build of {@code team}'s template named {@code alias}: the template the team already
     * has under that name, or a new one with the id {@code newTemplateId} gives; the build gets a new
     * UUID and status {@code waiting}.
     *
     * @param tags the tags the build takes once ready (at least one; duplicates dropped)
     * @throws StoreException INVALID_ARGUMENT without tags
     */
    public Build request(String team, String alias, List<String> tags, int cpuCount, int memoryMb,
                         Supplier<String> newTemplateId) {
        List<String> unique = new ArrayList<>(new LinkedHashSet<>(tags));
        if (unique.isEmpty()) {
            throw StoreException.invalid("a build needs at least one tag");
        }
        return changed(db.inTransaction(tx -> {
            long now = clock.millis();
            Optional<BuiltTemplate> existing = tx.first("SELECT template_id, team, alias, created_at, updated_at "
                    + "FROM built_templates WHERE team = ? AND alias = ?", TemplateBuildStore::template, team, alias);
            String templateId;
            if (existing.isPresent()) {
                templateId = existing.get().templateId();
                tx.update("UPDATE built_templates SET updated_at = ? WHERE template_id = ?", now, templateId);
            } else {
                templateId = newTemplateId.get();
                tx.update("INSERT INTO built_templates (template_id, team, alias, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                        templateId, team, alias, now, now);
            }
            String buildId = UUID.randomUUID().toString();
            tx.update("INSERT INTO template_builds (build_id, template_id, status, tags, cpu_count, memory_mb, created_at, "
                    + "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", buildId, templateId, WAITING, StoreJson.write(unique),
                    cpuCount, memoryMb, now, now);
            return buildIn(tx, buildId).orElseThrow();
        }));
    }

    /**
     * Reports every later status change (a new waiting build, building, ready, error) to
     * {@code listener}, on the thread that made it, after its commit; it must not block.
     */
    public void addListener(Consumer<Build> listener) {
        listeners.add(listener);
    }

    private Build changed(Build b) {
        listeners.forEach(l -> l.accept(b));
        return b;
    }

    /**
     * Marks a waiting build as building (E2B's trigger, docs/e2b-wire.md#build-trigger), recording where it runs.
     *
     * @throws StoreException NOT_FOUND when the template has no such build; INVALID_ARGUMENT
     *     "build is not in waiting state" when it was triggered before
     */
    public Build start(String templateId, String buildId, String clusterId) {
        return changed(db.inTransaction(tx -> {
            Build b = buildIn(tx, buildId).filter(x -> x.templateId().equals(templateId))
                    .orElseThrow(() -> StoreException.notFound("build '" + buildId + "' of template '" + templateId + "' not found"));
            if (!b.status().equals(WAITING)) {
                throw StoreException.invalid("build is not in waiting state (it is " + b.status() + ")");
            }
            tx.update("UPDATE template_builds SET status = ?, cluster_id = ?, updated_at = ? WHERE build_id = ?", BUILDING,
                    clusterId, clock.millis(), buildId);
            return buildIn(tx, buildId).orElseThrow();
        }));
    }

    /**
     * Appends log entries in order (messages cut at 4,096 characters); past
     * {@link #MAX_LOG_ENTRIES} they are only counted.
     *
     * @throws StoreException NOT_FOUND for an unknown build
     */
    public void appendLogs(String buildId, List<LogEntry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        db.inTransaction(tx -> {
            int count = tx.first("SELECT log_count FROM template_builds WHERE build_id = ? FOR UPDATE", rs -> rs.getInt(1), buildId)
                    .orElseThrow(() -> StoreException.notFound("build '" + buildId + "' not found"));
            int seq = count;
            for (LogEntry e : entries) {
                if (seq < MAX_LOG_ENTRIES) {
                    String m = e.message().length() > MAX_MESSAGE_CHARS ? e.message().substring(0, MAX_MESSAGE_CHARS) : e.message();
                    String step = e.step() == null ? "" : e.step().length() > 32 ? e.step().substring(0, 32) : e.step();
                    tx.update("INSERT INTO template_build_logs (build_id, seq, at, level, step, message) VALUES (?, ?, ?, ?, ?, ?)",
                            buildId, seq, e.atMs(), e.level(), step, m);
                }
                seq++;
            }
            tx.update("UPDATE template_builds SET log_count = ?, updated_at = ? WHERE build_id = ?", seq, clock.millis(), buildId);
            return null;
        });
    }

    /**
     * The log entries from {@code offset} on (E2B's logsOffset), at most {@code limit}; empty past
     * the end.
     */
    public List<LogEntry> logs(String buildId, int offset, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return db.query("SELECT at, level, step, message FROM template_build_logs WHERE build_id = ? AND seq >= ? ORDER BY seq "
                + "LIMIT ?", rs -> new LogEntry(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)), buildId,
                Math.max(0, offset), limit);
    }

    /**
     * A building build succeeded: status {@code ready}, its image recorded, and its tags moved to it.
     *
     * @throws StoreException NOT_FOUND for an unknown build; INVALID_ARGUMENT when it is not building
     */
    public Build finish(String buildId, String image) {
        return changed(db.inTransaction(tx -> {
            Build b = building(tx, buildId);
            long now = clock.millis();
            tx.update("UPDATE template_builds SET status = ?, image = ?, updated_at = ?, finished_at = ? WHERE build_id = ?", READY,
                    image, now, now, buildId);
            for (String tag : b.tags()) {
                if (tx.update("UPDATE template_tags SET build_id = ?, created_at = ? WHERE template_id = ? AND tag = ?", buildId, now,
                        b.templateId(), tag) == 0) {
                    tx.update("INSERT INTO template_tags (template_id, tag, build_id, created_at) VALUES (?, ?, ?, ?)",
                            b.templateId(), tag, buildId, now);
                }
            }
            return buildIn(tx, buildId).orElseThrow();
        }));
    }

    /**
     * A waiting or building build failed: status {@code error} with E2B's reason.
     *
     * @throws StoreException NOT_FOUND for an unknown build; INVALID_ARGUMENT when it ended already
     */
    public Build fail(String buildId, String message, String step) {
        return changed(db.inTransaction(tx -> {
            Build b = buildIn(tx, buildId).orElseThrow(() -> StoreException.notFound("build '" + buildId + "' not found"));
            if (b.status().equals(READY) || b.status().equals(ERROR)) {
                throw StoreException.invalid("build '" + buildId + "' ended already (" + b.status() + ")");
            }
            long now = clock.millis();
            String m = message.length() > 8192 ? message.substring(0, 8192) : message;
            tx.update("UPDATE template_builds SET status = ?, reason_message = ?, reason_step = ?, updated_at = ?, finished_at = ? "
                    + "WHERE build_id = ?", ERROR, m, step, now, now, buildId);
            return buildIn(tx, buildId).orElseThrow();
        }));
    }

    public Optional<Build> build(String buildId) {
        return db.first("SELECT " + BUILD_COLUMNS + " FROM template_builds WHERE build_id = ?", TemplateBuildStore::build, buildId);
    }

    /** Builds with status {@code building}, oldest first (a hub that starts finds those a previous one left). */
    public List<Build> building() {
        return db.query("SELECT " + BUILD_COLUMNS + " FROM template_builds WHERE status = ? ORDER BY created_at, build_id",
                TemplateBuildStore::build, BUILDING);
    }

    /** The images of every ready build (of every template), each once: what the hub's blobs must keep. */
    public List<String> readyImages() {
        return db.query("SELECT DISTINCT image FROM template_builds WHERE status = ? AND image <> ''", rs -> rs.getString(1), READY);
    }

    /** The builds of a template, newest first. */
    public List<Build> builds(String templateId) {
        return db.query("SELECT " + BUILD_COLUMNS + " FROM template_builds WHERE template_id = ? ORDER BY created_at DESC, build_id",
                TemplateBuildStore::build, templateId);
    }

    public Optional<BuiltTemplate> template(String templateId) {
        return db.first("SELECT template_id, team, alias, created_at, updated_at FROM built_templates WHERE template_id = ?",
                TemplateBuildStore::template, templateId);
    }

    public Optional<BuiltTemplate> byAlias(String team, String alias) {
        return db.first("SELECT template_id, team, alias, created_at, updated_at FROM built_templates WHERE team = ? AND alias = ?",
                TemplateBuildStore::template, team, alias);
    }

    /** A team's built templates, oldest first. */
    public List<BuiltTemplate> templates(String team) {
        return db.query("SELECT template_id, team, alias, created_at, updated_at FROM built_templates WHERE team = ? "
                + "ORDER BY created_at, template_id", TemplateBuildStore::template, team);
    }

    /** The template's tags, by name. */
    public List<Tag> tags(String templateId) {
        return db.query("SELECT tag, build_id, created_at FROM template_tags WHERE template_id = ? ORDER BY tag",
                rs -> new Tag(rs.getString(1), rs.getString(2), rs.getLong(3)), templateId);
    }

    /**
     * Points {@code newTags} at the build {@code fromTag} points at (E2B's assignTags).
     *
     * @return that build's id
     * @throws StoreException NOT_FOUND when {@code fromTag} does not exist on the template
     */
    public String assignTags(String templateId, String fromTag, List<String> newTags) {
        return db.inTransaction(tx -> {
            String buildId = tx.first("SELECT build_id FROM template_tags WHERE template_id = ? AND tag = ?", rs -> rs.getString(1),
                    templateId, fromTag).orElseThrow(() -> StoreException.notFound("tag '" + fromTag + "' of template '"
                    + templateId + "' not found"));
            long now = clock.millis();
            for (String tag : new LinkedHashSet<>(newTags)) {
                if (tx.update("UPDATE template_tags SET build_id = ?, created_at = ? WHERE template_id = ? AND tag = ?", buildId, now,
                        templateId, tag) == 0) {
                    tx.update("INSERT INTO template_tags (template_id, tag, build_id, created_at) VALUES (?, ?, ?, ?)", templateId,
                            tag, buildId, now);
                }
            }
            return buildId;
        });
    }

    /**
     * Removes tags (E2B's removeTags); all or nothing.
     *
     * @throws StoreException NOT_FOUND naming the first tag the template does not have
     */
    public void removeTags(String templateId, List<String> tags) {
        db.inTransaction(tx -> {
            for (String tag : new LinkedHashSet<>(tags)) {
                if (tx.update("DELETE FROM template_tags WHERE template_id = ? AND tag = ?", templateId, tag) == 0) {
                    throw StoreException.notFound("tag '" + tag + "' of template '" + templateId + "' not found");
                }
            }
            return null;
        });
    }

    /** Deletes a built template with its builds, logs and tags; false when there was none. */
    public boolean delete(String templateId) {
        return db.inTransaction(tx -> {
            tx.update("DELETE FROM template_build_logs WHERE build_id IN (SELECT build_id FROM template_builds WHERE template_id = ?)",
                    templateId);
            tx.update("DELETE FROM template_builds WHERE template_id = ?", templateId);
            tx.update("DELETE FROM template_tags WHERE template_id = ?", templateId);
            return tx.update("DELETE FROM built_templates WHERE template_id = ?", templateId) > 0;
        });
    }

    private Build building(Database.Tx tx, String buildId) throws SQLException {
        Build b = buildIn(tx, buildId).orElseThrow(() -> StoreException.notFound("build '" + buildId + "' not found"));
        if (!b.status().equals(BUILDING)) {
            throw StoreException.invalid("build '" + buildId + "' is " + b.status() + ", not building");
        }
        return b;
    }

    private static Optional<Build> buildIn(Database.Tx tx, String buildId) throws SQLException {
        return tx.first("SELECT " + BUILD_COLUMNS + " FROM template_builds WHERE build_id = ?", TemplateBuildStore::build, buildId);
    }

    private static BuiltTemplate template(ResultSet rs) throws SQLException {
        return new BuiltTemplate(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getLong(5));
    }

    private static Build build(ResultSet rs) throws SQLException {
        long finished = rs.getLong(14);
        Long finishedAt = rs.wasNull() ? null : finished;
        return new Build(rs.getString(1), rs.getString(2), rs.getString(3), StoreJson.stringList(rs.getString(4)), rs.getInt(5),
                rs.getInt(6), rs.getString(7), rs.getString(8), rs.getString(9), rs.getString(10), rs.getInt(11), rs.getLong(12),
                rs.getLong(13), finishedAt);
    }
}
