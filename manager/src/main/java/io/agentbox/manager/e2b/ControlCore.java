package io.agentbox.manager.e2b;

import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.auth.Principal;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.agentbox.manager.builds.BuildRequest;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.Template;
import io.grpc.Channel;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The sandbox lifecycle as operations without HTTP: the same code the E2B routes run
 * ({@link SandboxesApi}, {@link PauseApi}, {@link SnapshotsApi}), for other API surfaces (the
 * native {@code /v1} API) that shape their own requests and answers.
 *
 * <p>Tenancy is the caller's team: another team's sandbox is unknown (404). Errors are
 * {@link ApiException}s whose {@link ApiException#status() status} and message a surface
 * re-shapes into its own error body (their body has E2B's shape): 400 bad input, 404 unknown,
 * 409 conflict (paused, running), 429 team limits, 503 no cluster or image not ready, 507 no
 * space, 504 worker timeout, 500 other worker failures.
 */
public final class ControlCore {
    /** Largest sandbox timeout in seconds. */
    public static final int MAX_TIMEOUT_SECONDS = SandboxesApi.MAX_TIMEOUT_SECONDS;

    /** {@code seconds} as a sandbox timeout; 400 naming {@code field} outside 1..{@link #MAX_TIMEOUT_SECONDS}. */
    public static int timeoutSeconds(long seconds, String field) {
        return SandboxesApi.timeoutSeconds(seconds, field, 0);
    }

    private final SandboxesApi sandboxes;
    private final PauseApi pauses;
    private final SnapshotsApi snapshots;
    private final SnapshotStore snapshotStore;
    private final EnvdTokens tokens;
    private final WorkerSandboxes workers;
    private final List<TemplateKind> kinds;

    private final ApiStore store;
    private final TemplatesApi templates;

    ControlCore(SandboxesApi sandboxes, PauseApi pauses, SnapshotsApi snapshots, SnapshotStore snapshotStore,
                EnvdTokens tokens, WorkerSandboxes workers, List<TemplateKind> kinds, ApiStore store, TemplatesApi templates) {
        this.store = store;
        this.templates = templates;
        this.sandboxes = sandboxes;
        this.pauses = pauses;
        this.snapshots = snapshots;
        this.snapshotStore = snapshotStore;
        this.tokens = tokens;
        this.workers = workers;
        this.kinds = kinds;
    }

    /**
     * A sandbox with its worker's view: {@code info} null and {@code reachable} false while its
     * cluster is disconnected (the record's values stand then).
     */
    public record Sandbox(SandboxRecord record, SandboxInfo info, boolean reachable) {
        /** {@code running} or {@code paused}, or {@code unreachable} while its cluster is disconnected. */
        public String state() {
            return new SandboxesApi.Listed(record, info, reachable).state();
        }
    }

    /**
     * The E2B names of the templates sandboxes started from (as the E2B answers report them), each
     * template looked up once per function: use one for one request's rows.
     */
    public Function<SandboxRecord, TemplateLabel> labels() {
        return sandboxes.labels();
    }

    /**
     * The E2B names of hub template {@code hubTemplate}: a built template's id and alias for its
     * {@code built-…} pool, a snapshot's id for its {@code snap-…} pool, a configured template's own name.
     */
    public TemplateLabel label(String hubTemplate) {
        return sandboxes.label(hubTemplate);
    }

    /** A running sandbox of the caller and the channel to its worker. */
    public record Target(SandboxRecord record, Channel channel) {
        public String sandboxId() {
            return record.sandboxId();
        }
    }

    /**
     * Creates a sandbox of {@code template} (a template name or a snapshot id) for {@code who}.
     *
     * @param cluster         pins the sandbox to that cluster; null picks one
     * @param timeoutSeconds  1..{@link #MAX_TIMEOUT_SECONDS}; null = the template's default
     * @return the new sandbox: the hub's record and the worker's answer to the create
     */
    public Sandbox create(Principal who, String template, String cluster, Long timeoutSeconds,
                          Map<String, String> env, Map<String, String> metadata) {
        String id = cluster == null ? template : cluster + "::" + template;
        SandboxesApi.Listed l = sandboxes.createRecord(who, new E2bBodies.NewSandbox(id, timeoutSeconds, metadata, env,
                null, null, null, null, null, null, null, null));
        return new Sandbox(l.record(), l.info(), l.reachable());
    }

    /**
     * The running and paused sandboxes of {@code team} (every team when null) that pass
     * {@code filter}, oldest first (checked with their workers: ended ones are left out).
     */
    public List<Sandbox> list(String team, Predicate<SandboxRecord> filter) {
        return sandboxes.listed(team, filter).stream().map(l -> new Sandbox(l.record(), l.info(), l.reachable())).toList();
    }

    /** The caller's sandbox as its worker sees it now; 404 when unknown, foreign or ended. */
    public Sandbox get(Principal who, String sandboxId) {
        SandboxesApi.Listed l = sandboxes.view(who, sandboxId);
        return new Sandbox(l.record(), l.info(), l.reachable());
    }

    /** The hub's record of a sandbox of any team that has not ended (also one a worker runs and the hub lacks). */
    public Optional<SandboxRecord> find(String sandboxId) {
        return workers.find(sandboxId);
    }

    /** The caller's running sandbox and its worker's channel; 404 unknown, 503 cluster disconnected. */
    public Target target(Principal who, String sandboxId) {
        SandboxesApi.Owned o = sandboxes.owned(who, sandboxId);
        return new Target(o.record(), o.channel());
    }

    public void kill(Principal who, String sandboxId) {
        sandboxes.kill(who, sandboxId);
    }

    /** End = now + {@code seconds} (1..{@link #MAX_TIMEOUT_SECONDS}); 404 when paused (no timeout to set). */
    public void setTimeout(Principal who, String sandboxId, long seconds) {
        sandboxes.timeout(who, sandboxId, new E2bBodies.SetTimeout(seconds));
    }

    /** Freezes every process (memory kept); 409 when paused already, 400 on a runtime that cannot pause. */
    public void pause(Principal who, String sandboxId) {
        pauses.pause(who, sandboxId, new E2bBodies.Pause(true));
    }

    /**
     * A paused sandbox runs again with end = now + {@code timeoutSeconds}; a running one has its end
     * only ever extended. True when it was paused.
     */
    public boolean resume(Principal who, String sandboxId, int timeoutSeconds) {
        return pauses.connect(sandboxes.owned(who, sandboxId), timeoutSeconds, true, "resume sandbox");
    }

    /** The sandbox back to its template's or snapshot's files with fresh processes; 409 when paused. */
    public SandboxRecord reset(Principal who, String sandboxId) {
        return requireSnapshots().reset(who, sandboxId);
    }

    /** Snapshots the sandbox's files as {@code name} ({@code alias[:tag]}, null: unnamed). */
    public SnapshotStore.Snap snapshot(Principal who, String sandboxId, String name) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        if (name != null) {
            body.put("name", name);
        }
        return requireSnapshots().snapshot(who, sandboxId, body);
    }

    /** The team's snapshot of that id ({@code <id>:<tag>} or {@code <team>/<alias>:<tag>}). */
    public Optional<SnapshotStore.Snap> findSnapshot(Principal who, String snapshotId) {
        requireSnapshots();
        SnapshotsApi.Name n;
        try {
            n = SnapshotsApi.parseName("snapshot", snapshotId);
        } catch (ApiException e) {
            return Optional.empty();
        }
        if (n.namespace() != null && !n.namespace().equals(who.team())) {
            return Optional.empty();
        }
        return snapshotStore.find(who.team(), n.alias(), n.tag() == null ? SnapshotsApi.DEFAULT_TAG : n.tag());
    }

    /** Deletes a snapshot or built template the caller's team has; false when none has that id. */
    public boolean deleteTemplateLike(Principal who, String id) {
        for (TemplateKind kind : kinds) {
            if (kind.delete(who, id)) {
                return true;
            }
        }
        return false;
    }

    /** The templates configured on the hub (management API), sorted by name; not those serving builds or snapshots. */
    public List<Template> configuredTemplates() {
        return store.templates().stream().filter(t -> !t.getName().startsWith(TemplateBuilds.SYNCED_PREFIX)
                && t.getSnapshot().isEmpty()).toList();
    }

    /**
     * The team's templates built with {@code Template.build} in E2B's list shape ({@code templateID,
     * aliases, cpuCount, memoryMB, diskSizeMB, public, buildStatus, createdAt, updatedAt}); empty
     * where builds are not served (a worker's local API).
     */
    public List<ObjectNode> builtTemplates(Principal who) {
        return templates == null ? List.of() : templates.built(who);
    }

    /**
     * Requests and starts a build of the caller's template {@code name} ({@code alias[:tag]}; a new
     * template, or a new build of the team's template of that name) from {@code request}'s base
     * and steps, as E2B's request and trigger do (docs/template-builds.md). The build runs in the
     * background; its status and log are in {@link #builds} and {@link #buildLogs}.
     *
     * @param cpuCount CPUs of the build's and the template's sandboxes, 0 = unlimited
     * @param memoryMb MB likewise, 0 = unlimited
     * @return the build, {@code building}
     * @throws ApiException 400 bad name, base or steps; 409 the name of a configured template; 503
     *     no cluster connected or too many builds waiting; 501 on a worker's local API
     */
    public TemplateBuildStore.Build buildTemplate(Principal who, String name, int cpuCount, int memoryMb, BuildRequest request) {
        return requireBuilds().requestAndStart(who, name, cpuCount, memoryMb, request);
    }

    /**
     * The built template {@code idOrName} names as {@code who} sees it: its team's (by id or
     * alias), or any team's by id for an admin key; empty otherwise, and always on a worker's
     * local API (it has no builds).
     */
    public Optional<TemplateBuildStore.BuiltTemplate> builtTemplate(Principal who, String idOrName) {
        return templates == null ? Optional.empty() : templates.visible(who, idOrName);
    }

    /** The builds of a built template, newest first. */
    public List<TemplateBuildStore.Build> builds(TemplateBuildStore.BuiltTemplate template) {
        return requireBuilds().builds().store().builds(template.templateId());
    }

    /** A build of {@code template}; empty when it has none of that id. */
    public Optional<TemplateBuildStore.Build> build(TemplateBuildStore.BuiltTemplate template, String buildId) {
        return requireBuilds().builds().store().build(buildId).filter(b -> b.templateId().equals(template.templateId()));
    }

    /** Up to {@code limit} log entries of a build from {@code offset} on, in order (empty past the end). */
    public List<TemplateBuildStore.LogEntry> buildLogs(TemplateBuildStore.Build build, int offset, int limit) {
        return requireBuilds().builds().store().logs(build.buildId(), offset, limit);
    }

    /** Whether {@code name} is a template configured on the hub (deleted with the management API only). */
    public boolean isConfigured(String name) {
        return store.template(name).isPresent();
    }

    /** The team's snapshots, newest first (every page of the store). */
    public List<SnapshotStore.Snap> snapshots(Principal who) {
        requireSnapshots();
        List<SnapshotStore.Snap> all = new java.util.ArrayList<>();
        for (int offset = 0; ; offset += SnapshotStore.MAX_PAGE) {
            List<SnapshotStore.Snap> page = snapshotStore.list(who.team(), null, null, null, offset, SnapshotStore.MAX_PAGE);
            all.addAll(page);
            if (page.size() < SnapshotStore.MAX_PAGE) {
                return all;
            }
        }
    }

    /** The envd access token of a sandbox (the data plane's {@code X-Access-Token}). */
    public String accessToken(String sandboxId) {
        return tokens.token(sandboxId);
    }

    private TemplatesApi requireBuilds() {
        if (templates == null) {
            throw ApiException.e2b(501, "template builds are served by the hub, not by a worker's local API");
        }
        return templates;
    }

    private SnapshotsApi requireSnapshots() {
        if (snapshots == null) {
            throw ApiException.e2b(501, "snapshots and reset are served by the hub, not by a worker's local API");
        }
        return snapshots;
    }
}
