package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.builds.SnapshotCopies;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.JsonBinder;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.manager.store.SnapshotStore.Snap;
import io.agentbox.manager.store.StoreException;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.protocol.v1.Template;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.Fields;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots, fork and reset on the E2B control plane (docs/e2b-wire.md#snapshots, docs/e2b-wire.md#fork; issue 14
 * points 3–5; docs/snapshots-and-reset.md), and the snapshot {@link TemplateKind}: a snapshot id
 * in any form of docs/e2b-wire.md#starting-from-a-snapshot resolves to the template serving it, pinned to the cluster that holds it, and
 * {@code DELETE /templates/{id}} deletes it.
 *
 * <p>Routes: {@code POST /sandboxes/{id}/snapshots} → 201 {@code {snapshotID, names}};
 * {@code GET /snapshots} → 200 array, newest first, {@code X-Next-Token} paging;
 * {@code POST /sandboxes/{id}/fork} → 201 array of {@code {sandbox}} or {@code {error:{code,message}}};
 * and {@link #reset} for the native {@code POST /v1/sandboxes/{id}/reset}. Errors in
 * E2B's shape: 400 bad input, 404 unknown or foreign sandbox or snapshot, worker errors through
 * {@link E2bErrors}.
 */
final class SnapshotsApi implements TemplateKind {
    private static final Logger log = LoggerFactory.getLogger(SnapshotsApi.class);
    /** docs/e2b-wire.md#names-tags-and-ids: alias and namespace after trim + lowercase. */
    private static final Pattern ALIAS = Pattern.compile("[a-z0-9_-]{1,128}");
    private static final Pattern TAG = Pattern.compile("[a-z0-9_.-]{1,128}");
    private static final Pattern UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    static final String DEFAULT_TAG = "default";
    /** Name prefix of the hub templates serving snapshots (also the worker's snapshot ids). */
    static final String SERVING_PREFIX = "snap-";
    static final int MAX_FORKS = 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SnapshotStore store;
    private final SandboxesApi sandboxes;
    private final ClusterRouter router;
    /** Copies snapshots to the hub so they run on every cluster; null: they stay where they were made. */
    private final SnapshotCopies copies;

    SnapshotsApi(SnapshotStore store, SandboxesApi sandboxes, ClusterRouter router, SnapshotCopies copies) {
        this.copies = copies;
        this.store = store;
        this.sandboxes = sandboxes;
        this.router = router;
    }

    void routes(RouteTable.Builder<E2bEndpoint> routes) {
        routes.add("POST", "/sandboxes/{id}/snapshots", c -> {
            Snap s = snapshot(c.who(), c.param("id"), c.body());
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("snapshotID", s.snapshotId());
            o.set("names", Json.MAPPER.valueToTree(s.names()));
            return Reply.json(201, o);
        });
        routes.add("GET", "/snapshots", c -> {
            String[] next = new String[1];
            ArrayNode list = list(c.who(), c.query(), next);
            return Reply.json(200, list).withHeader("X-Next-Token", next[0]);
        });
        routes.add("POST", "/sandboxes/{id}/fork", c -> Reply.json(201, fork(c.who(), c.param("id"), c.body())));
        // POST /v1/sandboxes/{id}/reset is a native route (io.agentbox.manager.nativeapi) over reset() below
    }

    /** A parsed snapshot name: {@code [namespace/]alias[:tag]} (docs/e2b-wire.md#names-tags-and-ids). */
    record Name(String namespace, String alias, String tag) {}

    /**
     * Parses {@code [ns/]alias[:tag]} per docs/e2b-wire.md#names-tags-and-ids (trim, lowercase; a tag is not a UUID).
     *
     * @throws ApiException 400 naming what is wrong
     */
    static Name parseName(String what, String raw) {
        String v = raw.trim().toLowerCase(Locale.ROOT);
        String ns = null;
        int slash = v.indexOf('/');
        if (slash >= 0) {
            ns = v.substring(0, slash);
            v = v.substring(slash + 1);
        }
        String tag = null;
        int colon = v.indexOf(':');
        if (colon >= 0) {
            tag = v.substring(colon + 1);
            v = v.substring(0, colon);
        }
        if (!ALIAS.matcher(v).matches() || (ns != null && !ALIAS.matcher(ns).matches())) {
            throw ApiException.e2b(400, what + " '" + InputText.quote(raw) + "': a name is [namespace/]alias[:tag] with "
                    + "alias and namespace of lowercase letters, digits, '-' and '_'");
        }
        if (tag != null && (!TAG.matcher(tag).matches() || UUID.matcher(tag).matches())) {
            throw ApiException.e2b(400, what + " '" + InputText.quote(raw) + "': a tag is lowercase letters, digits, '-', '_' "
                    + "and '.', and not a UUID");
        }
        return new Name(ns, v, tag);
    }

    /** {@code POST /sandboxes/{id}/snapshots} body {@code {"name"?}}. */
    Snap snapshot(Principal who, String sandboxId, ObjectNode body) {
        JsonNode n = body.get("name");
        String alias = "";
        String tag = DEFAULT_TAG;
        if (n != null && !n.isNull()) {
            if (!n.isTextual()) {
                throw ApiException.e2b(400, "field 'name' must be a string");
            }
            Name name = parseName("field 'name'", n.textValue());
            if (name.namespace() != null && !name.namespace().equals(who.team())) {
                throw ApiException.e2b(400, "field 'name': namespace '" + name.namespace() + "' is not your team ('"
                        + who.team() + "')");
            }
            alias = name.alias();
            tag = name.tag() == null ? DEFAULT_TAG : name.tag();
        }
        Snap s = take(who, sandboxId, alias, tag);
        if (copies != null) {
            copies.start(s); // in the background; until it ends the snapshot serves from its cluster
        }
        return s;
    }

    /** Snapshots the caller's sandbox on its worker and records it; cleans the worker's copy up when recording fails. */
    private Snap take(Principal who, String sandboxId, String alias, String tag) {
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        String cluster = s.record().clusterId();
        String templateName = SERVING_PREFIX + randomId(20);
        try {
            SandboxesApi.blocking(s.channel()).createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(sandboxId)
                    .setSnapshotId(templateName).build());
        } catch (StatusRuntimeException e) {
            throw E2bErrors.fromWorker(e, "create snapshot");
        }
        SnapshotStore.Created created;
        try {
            Template source = store.templateSpec(s.record().template()).orElseGet(() -> Template.newBuilder()
                    .setName(s.record().template()).build());
            Template serving = source.toBuilder().setName(templateName).setSnapshot(templateName).setImage("")
                    .setPoolSize(0).clearClusters().build();
            created = store.create(who.team(), alias, tag, sandboxId, cluster, serving, () -> randomId(20));
        } catch (RuntimeException e) {
            forget(cluster, templateName);
            throw e instanceof StoreException se ? ApiException.e2b(500, "create snapshot: " + se.getMessage()) : e;
        }
        created.replaced().ifPresent(r -> forget(r.clusterId(), r.templateName()));
        return created.snap();
    }

    /** {@code GET /snapshots?sandboxID&name&limit&nextToken} (docs/e2b-wire.md#listing-snapshots); {@code next[0]} receives the next page's token or null. */
    ArrayNode list(Principal who, Fields query, String[] next) {
        int limit = SnapshotStore.MAX_PAGE;
        String l = query.getValue("limit");
        if (l != null && !l.isEmpty()) {
            try {
                limit = Integer.parseInt(l);
            } catch (NumberFormatException e) {
                limit = -1;
            }
            if (limit < 1 || limit > SnapshotStore.MAX_PAGE) {
                throw ApiException.e2b(400, "query parameter 'limit' must be an integer between 1 and " + SnapshotStore.MAX_PAGE);
            }
        }
        int offset = 0;
        String token = query.getValue("nextToken");
        if (token != null && !token.isEmpty()) {
            try {
                offset = Integer.parseInt(new String(Base64.getUrlDecoder().decode(token),
                        StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                offset = -1;
            }
            if (offset < 0) {
                throw ApiException.e2b(400, "query parameter 'nextToken' is not a token this server issued");
            }
        }
        String sandboxId = emptyToNull(query.getValue("sandboxID"));
        String idOrAlias = null;
        String tag = null;
        String name = emptyToNull(query.getValue("name"));
        ArrayNode out = Json.MAPPER.createArrayNode();
        next[0] = null;
        if (name != null) {
            Name parsed = parseName("query parameter 'name'", name);
            if (parsed.namespace() != null && !parsed.namespace().equals(who.team())) {
                return out; // another team's names: nothing of the caller's matches
            }
            idOrAlias = parsed.alias();
            tag = parsed.tag();
        }
        List<Snap> page = store.list(who.team(), sandboxId, idOrAlias, tag, offset, limit + 1);
        if (page.size() > limit) {
            next[0] = ListQuery.token(offset + limit);
            page = page.subList(0, limit);
        }
        for (Snap s : page) {
            ObjectNode o = out.addObject();
            o.put("snapshotID", s.snapshotId());
            o.set("names", Json.MAPPER.valueToTree(s.names()));
        }
        return out;
    }

    /**
     * {@code POST /sandboxes/{id}/fork} body {@code {"timeout"?, "count"?}} (docs/e2b-wire.md#fork): one snapshot of
     * the source, then {@code count} (1..{@value #MAX_FORKS}, default 1) sandboxes from it; each
     * entry is a sandbox or the error its create met. The snapshot is deleted afterwards: the forks
     * keep running on its layer (the worker keeps a layer while a sandbox uses it) and it is not
     * listed as one of the team's snapshots.
     */
    ArrayNode fork(Principal who, String sandboxId, ObjectNode body) {
        JsonNode c = body.get("count");
        int count = 1;
        if (c != null && !c.isNull()) {
            if (!c.isIntegralNumber() || c.longValue() < 1 || c.longValue() > MAX_FORKS) {
                throw ApiException.e2b(400, "field 'count' must be an integer between 1 and " + MAX_FORKS);
            }
            count = c.intValue();
        }
        int timeout = SandboxesApi.timeoutSeconds(JsonBinder.QUOTED.field(body, "timeout", Long.class), "timeout",
                0); // 0: the template's default
        Snap snap = take(who, sandboxId, "", DEFAULT_TAG);
        ArrayNode out = Json.MAPPER.createArrayNode();
        try {
            for (int i = 0; i < count; i++) {
                E2bBodies.NewSandbox create = E2bBodies.NewSandbox.of(snap.snapshotId(), timeout > 0 ? (long) timeout : null);
                // one entry per fork: the entry is made only once the create has answered
                ObjectNode entry = Json.MAPPER.createObjectNode();
                try {
                    entry.set("sandbox", sandboxes.create(who, create));
                } catch (ApiException e) {
                    ObjectNode err = entry.putObject("error");
                    err.put("code", e.status());
                    err.put("message", e.getMessage());
                }
                out.add(entry);
            }
        } finally {
            delete(who, snap.snapshotId());
        }
        return out;
    }

    /**
     * The sandbox back to its template's or snapshot's files with fresh processes (same id, end time
     * and envd access token); answers its record.
     */
    SandboxRecord reset(Principal who, String sandboxId) {
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        try {
            SandboxesApi.blocking(s.channel()).resetSandbox(SandboxRef.newBuilder().setSandboxId(sandboxId).build());
        } catch (StatusRuntimeException e) {
            throw E2bErrors.fromWorker(e, "reset sandbox");
        }
        return s.record();
    }

    @Override
    public Optional<Template> resolve(Principal who, String templateId) {
        Optional<Snap> snap = find(who, templateId);
        // with the hub's copy of its image (SnapshotCopies) it runs on every cluster, else where it was made
        return snap.flatMap(s -> store.templateSpec(s.templateName()))
                .map(t -> t.getImage().isEmpty() ? t.toBuilder().clearClusters().addClusters(snap.get().clusterId()).build()
                        : t.toBuilder().clearClusters().build());
    }

    private Optional<Snap> find(Principal who, String templateId) {
        Name n;
        try {
            n = parseName("template", templateId);
        } catch (ApiException e) {
            return Optional.empty(); // not a snapshot's name; other kinds may know it
        }
        if (n.namespace() != null && !n.namespace().equals(who.team())) {
            return Optional.empty();
        }
        return store.find(who.team(), n.alias(), n.tag() == null ? DEFAULT_TAG : n.tag());
    }

    @Override
    public Optional<TemplateLabel> label(String hubTemplate) {
        if (!hubTemplate.startsWith(SERVING_PREFIX)) {
            return Optional.empty();
        }
        return store.byTemplateName(hubTemplate).map(s -> new TemplateLabel(s.templateId(), s.snapshotId()));
    }

    @Override
    public boolean delete(Principal who, String templateId) {
        Name n;
        try {
            n = parseName("template", templateId);
        } catch (ApiException e) {
            return false;
        }
        if (n.namespace() != null && !n.namespace().equals(who.team())) {
            return false;
        }
        List<Snap> gone = store.delete(who.team(), n.alias(), n.tag());
        gone.forEach(s -> forget(s.clusterId(), s.templateName()));
        if (copies != null && !gone.isEmpty()) {
            copies.collect(); // the hub's copies of what is gone
        }
        return !gone.isEmpty();
    }

    /** Asks the cluster's worker to drop a snapshot image (best effort: a worker away keeps it until its GC). */
    private void forget(String cluster, String workerSnapshotId) {
        Channel channel = router.channel(cluster);
        if (channel == null) {
            log.warn("snapshot {}: cluster {} is not connected; its image stays on that worker", workerSnapshotId, cluster);
            return;
        }
        try {
            SandboxesApi.blocking(channel).deleteSnapshot(SnapshotRef.newBuilder().setSnapshotId(workerSnapshotId).build());
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                log.warn("snapshot {}: the worker of cluster {} did not delete it: {}", workerSnapshotId, cluster, e.getStatus());
            }
        }
    }

    private static String emptyToNull(String v) {
        return v == null || v.isEmpty() ? null : v;
    }

    /** A random id of lowercase letters and digits (E2B template ids are 20 such characters, docs/e2b-wire.md#names-tags-and-ids). */
    static String randomId(int length) {
        String chars = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder b = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            b.append(chars.charAt(RANDOM.nextInt(chars.length())));
        }
        return b.toString();
    }
}
