package io.agentbox.manager.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.builds.UploadTokens;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.builds.BuildRequest;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.builds.TemplateFiles;
import io.agentbox.manager.store.StoreException;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.BuiltTemplate;
import io.agentbox.protocol.v1.Template;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/**
 * The E2B template routes (docs/e2b-wire.md#template-builds) over {@link TemplateBuilds}:
 * build requests, COPY upload links and the signed upload, the trigger, status with
 * {@code logsOffset}, aliases ({@code Template.exists}), tags, listing and details. Configured
 * templates (management API) appear beside built ones and count as existing; built templates
 * are per team (another team's template id is 403).
 */
final class TemplatesApi {
    /** Entries per status response (E2B caps at 100). */
    static final int MAX_LOG_PAGE = 100;
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.:\\[\\]-]{1,255}");
    private static final Pattern PREFIX = Pattern.compile("(/[A-Za-z0-9._~-]+)*");
    private static final Map<String, Integer> LEVELS = Map.of("debug", 0, "info", 1, "warn", 2, "error", 3);

    private final ApiStore store;
    private final TemplateBuilds builds;
    private final BuiltTemplates built;

    TemplatesApi(ApiStore store, TemplateBuilds builds, BuiltTemplates built) {
        this.store = store;
        this.builds = builds;
        this.built = built;
    }

    TemplateBuilds builds() {
        return builds;
    }

    void routes(RouteTable.Builder<E2bEndpoint> routes) {
        routes.add("POST", "/v3/templates", c -> Reply.json(202, request(c.who(), c.body())));
        routes.add("GET", "/templates/{templateID}/files/{hash}", c -> Reply.json(201,
                fileLink(c.who(), c.param("templateID"), c.param("hash"), c.request())));
        routes.add("POST", "/v2/templates/{templateID}/builds/{buildID}", c -> {
            trigger(c.who(), c.param("templateID"), c.param("buildID"), c.body());
            return Reply.empty(202);
        });
        routes.add("GET", "/templates/{templateID}/builds/{buildID}/status", c -> Reply.json(200,
                status(c.who(), c.param("templateID"), c.param("buildID"), c.query())));
        routes.add("GET", "/templates/aliases/{alias}", c -> Reply.json(200, alias(c.who(), c.param("alias"))));
        routes.add("POST", "/templates/tags", c -> Reply.json(201, assignTags(c.who(), c.body())));
        routes.add("DELETE", "/templates/tags", c -> {
            removeTags(c.who(), c.body());
            return Reply.noContent();
        });
        routes.add("GET", "/templates/{templateID}/tags", c -> Reply.json(200, tags(c.who(), c.param("templateID"))));
        routes.add("GET", "/templates/{templateID}", c -> Reply.json(200, withBuilds(c.who(), c.param("templateID"))));
        routes.add("GET", "/v2/templates", c -> {
            Fields q = c.query();
            int limit = intParam(q, "limit", 100, 1, 100);
            int offset = 0;
            String token = q.getValue("nextToken");
            if (token != null && !token.isEmpty()) {
                try {
                    offset = Integer.parseInt(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
                } catch (IllegalArgumentException e) {
                    offset = -1;
                }
                if (offset < 0) {
                    throw ApiException.e2b(400, "query parameter 'nextToken' is not a token this server issued");
                }
            }
            List<ObjectNode> all = list(c.who());
            ArrayNode page = Json.MAPPER.createArrayNode();
            int to = Math.min(all.size(), offset + limit);
            for (int i = Math.min(offset, all.size()); i < to; i++) {
                page.add(all.get(i));
            }
            return Reply.json(200, page).withHeader("X-Next-Token", to < all.size() ? ListQuery.token(to) : null);
        });
    }

    /** The upload route, answered without an API key: its link's token authenticates it (docs/e2b-wire.md#archive-upload). */
    void signedRoutes(RouteTable.Builder<E2bEndpoint> routes) {
        routes.add("PUT", "/templates/{templateID}/files/{hash}", c -> {
            upload(c.param("templateID"), c.param("hash"), c.request());
            return Reply.empty(200);
        });
    }

    // ---- build ---------------------------------------------------------------------------------

    /** {@code POST /v3/templates} → 202 TemplateRequestResponseV3 (docs/e2b-wire.md#build-request). */
    ObjectNode request(Principal who, ObjectNode body) {
        JsonNode rawName = body.hasNonNull("name") ? body.get("name") : body.get("alias");
        if (rawName != null && !rawName.isTextual()) {
            throw ApiException.e2b(400, "'name' must be a string");
        }
        List<String> tags = new ArrayList<>();
        JsonNode t = body.get("tags");
        if (t != null && !t.isNull()) {
            if (!t.isArray()) {
                throw ApiException.e2b(400, "'tags' must be an array of strings");
            }
            for (JsonNode x : t) {
                if (!x.isTextual()) {
                    throw ApiException.e2b(400, "'tags' must be an array of strings");
                }
                tags.add(x.textValue());
            }
        }
        int cpu = intField(body, "cpuCount", 0, 1, 64);
        int memory = intField(body, "memoryMB", 0, 128, 1 << 20);
        Requested r = newBuild(who, rawName == null ? null : rawName.textValue(), tags, cpu, memory);
        Build b = r.build();
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", b.templateId());
        o.put("buildID", b.buildId());
        String shown = r.name().namespace() != null ? r.name().namespace() + "/" + r.name().alias() : r.name().alias();
        o.putArray("names").add(shown);
        o.putArray("aliases").add(shown);
        ArrayNode tagArray = o.putArray("tags");
        b.tags().forEach(tagArray::add);
        o.put("public", false);
        return o;
    }

    /** A requested build and the name it was requested under. */
    record Requested(TemplateName name, Build build) {}

    /**
     * Records a waiting build of the caller's template {@code rawName} ({@code [team/]alias[:tag]}):
     * the team's template of that alias, or a new one. It takes the name's tag and {@code moreTags}
     * (none: {@code default}) once ready.
     *
     * @param cpu    CPUs of its build sandboxes and served sandboxes, 0 = unlimited
     * @param memory MB likewise, 0 = unlimited
     * @throws ApiException 400 bad name or tags, 409 the name of a template configured on the hub
     */
    Requested newBuild(Principal who, String rawName, List<String> moreTags, int cpu, int memory) {
        TemplateName name = TemplateName.parse(rawName).requireTeam(who.team());
        List<String> tags = new ArrayList<>();
        if (name.tag() != null) {
            tags.add(name.tag());
        }
        tags.addAll(moreTags);
        tags = TemplateName.checkTags(tags);
        if (tags.isEmpty()) {
            tags = List.of(TemplateName.DEFAULT_TAG);
        }
        if (tags.size() > 64) {
            throw ApiException.e2b(400, "at most 64 tags per build");
        }
        if (store.template(name.alias()).isPresent() || name.alias().startsWith(TemplateBuilds.SYNCED_PREFIX)) {
            throw ApiException.e2b(409, "template name '" + name.alias() + "' is already in use by a template configured "
                    + "on the hub; choose another name");
        }
        return new Requested(name, builds.store().request(who.team(), name.alias(), tags, cpu, memory, TemplateBuilds::newTemplateId));
    }

    /**
     * Requests and starts a build in one call (the native {@code POST /v1/templates}): the E2B
     * request and trigger without the round trip between them. The base is checked before anything
     * is recorded; a build that cannot start is recorded as failed with the reason.
     *
     * @throws ApiException as {@link #newBuild}, 400 bad base or steps, 503 no cluster connected
     */
    Build requestAndStart(Principal who, String rawName, int cpu, int memory, BuildRequest request) {
        TemplateBuilds.Base base = request.fromImage() != null ? TemplateBuilds.imageBase(request.fromImage())
                : templateBase(who, request.fromTemplate());
        Build b = newBuild(who, rawName, List.of(), cpu, memory).build();
        BuiltTemplate t = builds.store().template(b.templateId()).orElseThrow();
        try {
            return builds.start(t, b, request, base);
        } catch (ApiException e) {
            try {
                builds.store().fail(b.buildId(), e.getMessage(), null);
            } catch (StoreException gone) {
                // started and failed meanwhile, or deleted
            }
            throw e;
        }
    }

    /** {@code GET /templates/{id}/files/{hash}} → 201 {present, url} (docs/e2b-wire.md#upload-links); the url is always there. */
    ObjectNode fileLink(Principal who, String templateId, String hash, Request request) {
        if (!TemplateFiles.HASH.matcher(hash).matches()) {
            throw ApiException.e2b(400, "Invalid files hash: it must be 64 lowercase hex digits");
        }
        BuiltTemplate t = ownTemplate(who, templateId);
        long expires = System.currentTimeMillis() / 1000 + UploadTokens.VALID_SECONDS;
        String token = builds.uploads().sign(t.templateId(), hash, expires);
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("present", builds.files().file(t.templateId(), hash).isPresent());
        o.put("url", publicBase(request) + "/templates/" + enc(t.templateId()) + "/files/" + hash + "?expires=" + expires
                + "&token=" + token);
        return o;
    }

    /** The signed {@code PUT} of one archive: 200 empty; 403 bad or expired token; 413 too large. */
    void upload(String templateId, String hash, Request request) {
        Fields q = HttpIo.query(request);
        if (!TemplateFiles.HASH.matcher(hash).matches()
                || !builds.uploads().verify(templateId, hash, q.getValue("expires"), q.getValue("token"),
                System.currentTimeMillis() / 1000)) {
            throw ApiException.e2b(403, "the upload link is not valid or has expired; ask for a new one "
                    + "(GET /templates/{templateID}/files/{hash})");
        }
        if (builds.store().template(templateId).isEmpty()) {
            throw ApiException.e2b(404, "template '" + templateId + "' not found");
        }
        try (InputStream in = Content.Source.asInputStream(request)) {
            builds.files().put(templateId, hash, request.getLength(), in);
        } catch (TemplateFiles.BadUpload e) {
            throw ApiException.e2b(e.tooLarge() ? 413 : 400, e.getMessage());
        } catch (IOException e) {
            throw HttpIo.unreadable(e);
        }
    }

    /** {@code POST /v2/templates/{id}/builds/{buildID}} → 202 empty; status is {@code building} on return (docs/e2b-wire.md#build-trigger). */
    void trigger(Principal who, String templateId, String buildId, ObjectNode body) {
        BuiltTemplate t = ownTemplate(who, templateId);
        Build b = builds.store().build(buildId).filter(x -> x.templateId().equals(t.templateId()))
                .orElseThrow(() -> ApiException.e2b(404, "build '" + buildId + "' of template '" + templateId + "' not found"));
        BuildRequest r = BuildRequest.parse(body);
        TemplateBuilds.Base base = r.fromImage() != null ? TemplateBuilds.imageBase(r.fromImage()) : templateBase(who, r.fromTemplate());
        builds.start(t, b, r, base);
    }

    /**
     * The built template {@code idOrName} names (an id, or {@code [team/]alias[:tag]} of the
     * caller's team) as the native API scopes it: the caller's team's, or for an admin key any
     * team's by id; empty for anything else, another team's template included (404, not 403).
     */
    Optional<BuiltTemplate> visible(Principal who, String idOrName) {
        Optional<BuiltTemplate> byId = builds.store().template(idOrName);
        if (byId.isPresent()) {
            return byId.filter(t -> who.isAdmin() || t.team().equals(who.team()));
        }
        try {
            return built.find(who, idOrName).map(BuiltTemplates.Named::template);
        } catch (ApiException e) {
            if (e.status() == 400 || e.status() == 403) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** {@code fromTemplate(x)}: a configured template (its image, or the built-in root) or one of the team's built ones. */
    private TemplateBuilds.Base templateBase(Principal who, String name) {
        Optional<Template> configured = store.template(name);
        if (configured.isPresent()) {
            return new TemplateBuilds.Base(configured.get().getImage(), false, null);
        }
        BuiltTemplates.Named named = built.find(who, name).orElseThrow(() -> ApiException.e2b(400,
                "fromTemplate '" + name + "': no such template"));
        Build b = built.tagged(named);
        if (!TemplateBuildStore.READY.equals(b.status()) || b.image() == null) {
            throw ApiException.e2b(400, "fromTemplate '" + name + "': its build " + b.buildId() + " is " + b.status());
        }
        return new TemplateBuilds.Base(b.image(), true, b.clusterId());
    }

    /** {@code GET .../builds/{buildID}/status?logsOffset&limit&level} → 200 TemplateBuildInfo (docs/e2b-wire.md#build-status-and-logs). */
    ObjectNode status(Principal who, String templateId, String buildId, Fields q) {
        int offset = intParam(q, "logsOffset", 0, 0, Integer.MAX_VALUE);
        int limit = intParam(q, "limit", MAX_LOG_PAGE, 0, MAX_LOG_PAGE);
        String level = q.getValue("level");
        if (level != null && !LEVELS.containsKey(level)) {
            throw ApiException.e2b(400, "query parameter 'level' must be one of debug, info, warn, error");
        }
        Optional<BuiltTemplate> t = builds.store().template(templateId);
        if (t.isPresent() && !t.get().team().equals(who.team())) {
            throw ApiException.e2b(403, "template '" + templateId + "' belongs to another team");
        }
        Build b = t.flatMap(x -> builds.store().build(buildId)).filter(x -> x.templateId().equals(templateId))
                .orElseThrow(() -> ApiException.e2b(400, "Build '" + buildId + "' not found"));
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", b.templateId());
        o.put("buildID", b.buildId());
        o.put("status", b.status());
        ArrayNode entries = o.putArray("logEntries");
        int min = level == null ? 0 : LEVELS.get(level);
        for (TemplateBuildStore.LogEntry e : builds.store().logs(b.buildId(), offset, limit)) {
            if (LEVELS.getOrDefault(e.level(), 1) >= min) {
                entries.add(logEntry(e));
            }
        }
        o.putArray("logs");
        if (TemplateBuildStore.ERROR.equals(b.status())) {
            ObjectNode reason = o.putObject("reason");
            reason.put("message", b.reasonMessage() == null ? "Unknown error" : b.reasonMessage());
            if (b.reasonStep() != null) {
                reason.put("step", b.reasonStep());
            }
            ArrayNode failed = reason.putArray("logEntries");
            int kept = Math.min(b.logCount(), TemplateBuildStore.MAX_LOG_ENTRIES);
            for (TemplateBuildStore.LogEntry e : builds.store().logs(b.buildId(), Math.max(0, kept - 200), 200)) {
                if (("warn".equals(e.level()) || "error".equals(e.level()))
                        && (b.reasonStep() == null || b.reasonStep().equals(e.step()))) {
                    failed.add(logEntry(e));
                }
            }
        }
        return o;
    }

    private static ObjectNode logEntry(TemplateBuildStore.LogEntry e) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("timestamp", Instant.ofEpochMilli(e.atMs()).toString());
        o.put("level", e.level());
        o.put("message", e.message());
        if (e.step() != null && !e.step().isEmpty()) {
            o.put("step", e.step());
        }
        return o;
    }

    // ---- names and tags ------------------------------------------------------------------------

    /** {@code GET /templates/aliases/{alias}} → 200 {templateID, public} or 404 (docs/e2b-wire.md#template-exists). */
    ObjectNode alias(Principal who, String alias) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        Optional<Template> configured = configured(alias);
        if (configured.isPresent()) {
            o.put("templateID", configured.get().getName());
            o.put("public", true);
            return o;
        }
        BuiltTemplates.Named n = built.find(who, alias).orElseThrow(() -> ApiException.e2b(404, "template '" + alias + "' not found"));
        if (n.tag() != null) {
            built.tagged(n); // 404 when that tag does not exist
        }
        o.put("templateID", n.template().templateId());
        o.put("public", false);
        return o;
    }

    /** A configured template named plainly or with the implicit tag ({@code base}, {@code base:default}). */
    private Optional<Template> configured(String name) {
        String plain = name.endsWith(":" + TemplateName.DEFAULT_TAG)
                ? name.substring(0, name.length() - TemplateName.DEFAULT_TAG.length() - 1) : name;
        if (plain.startsWith(TemplateBuilds.SYNCED_PREFIX)) {
            return Optional.empty();
        }
        return store.template(plain);
    }

    /** {@code POST /templates/tags} {target, tags} → 201 {buildID, tags} (docs/e2b-wire.md#tags). */
    ObjectNode assignTags(Principal who, ObjectNode body) {
        String target = text(body, "target");
        List<String> tags = TemplateName.checkTags(strings(body, "tags"));
        if (tags.isEmpty()) {
            throw ApiException.e2b(400, "'tags' must name at least one tag");
        }
        BuiltTemplates.Named n = built.require(who, target);
        String buildId;
        try {
            buildId = builds.store().assignTags(n.template().templateId(), n.tagOrDefault(), tags);
        } catch (StoreException e) {
            throw ApiException.e2b(404, e.getMessage());
        }
        builds.reconcile(n.template().templateId());
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("buildID", buildId);
        ArrayNode a = o.putArray("tags");
        tags.forEach(a::add);
        return o;
    }

    /** {@code DELETE /templates/tags} {name, tags} → 204 (docs/e2b-wire.md#tags). */
    void removeTags(Principal who, ObjectNode body) {
        String name = text(body, "name");
        List<String> tags = TemplateName.checkTags(strings(body, "tags"));
        if (tags.isEmpty()) {
            throw ApiException.e2b(400, "'tags' must name at least one tag");
        }
        BuiltTemplates.Named n = built.require(who, name);
        try {
            builds.store().removeTags(n.template().templateId(), tags);
        } catch (StoreException e) {
            throw ApiException.e2b(404, e.getMessage());
        }
        builds.reconcile(n.template().templateId());
    }

    /** {@code GET /templates/{id}/tags} → 200 [{tag, buildID, createdAt}] (docs/e2b-wire.md#tags). */
    ArrayNode tags(Principal who, String idOrName) {
        BuiltTemplates.Named n = built.require(who, idOrName);
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (TemplateBuildStore.Tag t : builds.store().tags(n.template().templateId())) {
            ObjectNode o = out.addObject();
            o.put("tag", t.tag());
            o.put("buildID", t.buildId());
            o.put("createdAt", Instant.ofEpochMilli(t.createdAtMs()).toString());
        }
        return out;
    }

    // ---- listing -------------------------------------------------------------------------------

    /** The team's templates built with {@code Template.build}, in the E2B list shape. */
    List<ObjectNode> built(Principal who) {
        List<ObjectNode> out = new ArrayList<>();
        for (BuiltTemplate t : builds.store().templates(who.team())) {
            out.add(builtJson(t, builds.store().builds(t.templateId())));
        }
        return out;
    }

    /** {@code GET /templates}: configured templates (not the hub templates serving builds), then the team's built ones. */
    List<ObjectNode> list(Principal who) {
        List<ObjectNode> out = new ArrayList<>();
        for (Template t : store.templates()) {
            if (!t.getName().startsWith(TemplateBuilds.SYNCED_PREFIX)) {
                out.add(E2bJson.template(t));
            }
        }
        for (BuiltTemplate t : builds.store().templates(who.team())) {
            out.add(builtJson(t, builds.store().builds(t.templateId())));
        }
        return out;
    }

    /** {@code GET /templates/{id}} → 200 TemplateWithBuilds (docs/e2b-wire.md#template-list-details-and-delete). */
    ObjectNode withBuilds(Principal who, String idOrName) {
        Optional<Template> configured = configured(idOrName);
        if (configured.isPresent()) {
            ObjectNode o = E2bJson.template(configured.get());
            o.putArray("builds");
            return o;
        }
        BuiltTemplates.Named n = built.require(who, idOrName);
        List<Build> all = builds.store().builds(n.template().templateId());
        ObjectNode o = builtJson(n.template(), all);
        ArrayNode a = o.putArray("builds");
        for (Build b : all) {
            ObjectNode x = a.addObject();
            x.put("buildID", b.buildId());
            x.put("status", b.status());
            x.put("cpuCount", b.cpuCount());
            x.put("memoryMB", b.memoryMb());
            x.put("diskSizeMB", 0);
            x.put("envdVersion", E2bJson.ENVD_VERSION);
            x.put("createdAt", Instant.ofEpochMilli(b.createdAtMs()).toString());
            x.put("updatedAt", Instant.ofEpochMilli(b.updatedAtMs()).toString());
            if (b.finishedAtMs() != null) {
                x.put("finishedAt", Instant.ofEpochMilli(b.finishedAtMs()).toString());
            }
        }
        return o;
    }

    /** E2B's {@code Template} for a built template: buildID is the newest ready build's (else the newest). */
    private static ObjectNode builtJson(BuiltTemplate t, List<Build> all) {
        Build shown = all.stream().filter(b -> TemplateBuildStore.READY.equals(b.status())).findFirst()
                .orElse(all.isEmpty() ? null : all.get(0));
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("templateID", t.templateId());
        o.put("buildID", shown == null ? "" : shown.buildId());
        o.put("buildStatus", all.isEmpty() ? TemplateBuildStore.WAITING : all.get(0).status());
        o.put("buildCount", all.size());
        o.put("cpuCount", shown == null ? 0 : shown.cpuCount());
        o.put("memoryMB", shown == null ? 0 : shown.memoryMb());
        o.put("diskSizeMB", 0);
        o.put("envdVersion", E2bJson.ENVD_VERSION);
        o.putArray("names").add(t.alias());
        o.putArray("aliases").add(t.alias());
        o.put("public", false);
        o.put("spawnCount", 0);
        o.put("createdAt", Instant.ofEpochMilli(t.createdAtMs()).toString());
        o.put("updatedAt", Instant.ofEpochMilli(t.updatedAtMs()).toString());
        o.putNull("lastSpawnedAt");
        o.putNull("createdBy");
        return o;
    }

    // ---- helpers -------------------------------------------------------------------------------

    /** The caller's built template by id; 404 unknown, 403 another team's. */
    private BuiltTemplate ownTemplate(Principal who, String templateId) {
        BuiltTemplate t = builds.store().template(templateId)
                .orElseThrow(() -> ApiException.e2b(404, "template '" + templateId + "' not found"));
        if (!t.team().equals(who.team())) {
            throw ApiException.e2b(403, "template '" + templateId + "' belongs to another team");
        }
        return t;
    }

    /**
     * The URL the client reached the API at, for links it must follow (docs/e2b-wire.md#archive-upload): scheme and host
     * from {@code X-Forwarded-Proto}/{@code X-Forwarded-Host} when a proxy set them, else the
     * request's; plus the {@code X-Forwarded-Prefix} of a proxy that serves the API below a path.
     */
    static String publicBase(Request request) {
        String proto = first(request.getHeaders().get("X-Forwarded-Proto"));
        if (proto == null || !(proto.equals("http") || proto.equals("https"))) {
            proto = request.getHttpURI().getScheme() == null ? "http" : request.getHttpURI().getScheme();
        }
        String host = first(request.getHeaders().get("X-Forwarded-Host"));
        if (host == null || !HOST.matcher(host).matches()) {
            host = request.getHeaders().get(HttpHeader.HOST);
        }
        if (host == null || !HOST.matcher(host).matches()) {
            host = Request.getServerName(request) + ":" + Request.getServerPort(request);
        }
        String prefix = first(request.getHeaders().get("X-Forwarded-Prefix"));
        if (prefix == null || !PREFIX.matcher(prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix).matches()) {
            prefix = "";
        } else if (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        return proto + "://" + host + prefix;
    }

    private static String first(String header) {
        if (header == null) {
            return null;
        }
        int comma = header.indexOf(',');
        String v = (comma < 0 ? header : header.substring(0, comma)).trim();
        return v.isEmpty() ? null : v;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static int intParam(Fields q, String name, int dflt, int min, int max) {
        String v = q.getValue(name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw ApiException.e2b(400, "query parameter '" + name + "' must be an integer from " + min + " to " + max);
    }

    private static int intField(ObjectNode body, String field, int dflt, int min, int max) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || v.longValue() < min || v.longValue() > max) {
            throw ApiException.e2b(400, "'" + field + "' must be an integer from " + min + " to " + max);
        }
        return v.intValue();
    }

    private static String text(ObjectNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || !v.isTextual() || v.textValue().isBlank()) {
            throw ApiException.e2b(400, "'" + field + "' must be a non-empty string");
        }
        return InputText.value("'" + field + "'", v.textValue());
    }

    private static List<String> strings(ObjectNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || !v.isArray()) {
            throw ApiException.e2b(400, "'" + field + "' must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode x : v) {
            if (!x.isTextual()) {
                throw ApiException.e2b(400, "'" + field + "' must be an array of strings");
            }
            out.add(x.textValue());
        }
        return out;
    }
}
