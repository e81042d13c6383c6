package io.agentbox.manager.e2b;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.BuiltTemplate;
import io.agentbox.protocol.v1.Template;
import java.util.List;
import java.util.Optional;

/**
 * Templates built with {@code Template.build} as a {@link TemplateKind}: a sandbox of
 * {@code name}, {@code name:tag}, {@code team/name:tag}, {@code templateID} or
 * {@code templateID:tag} starts from the build the tag (default {@code default}) points at
 * (docs/e2b-wire.md#tags), served by the hub template of that build
 * ({@link TemplateBuilds#syncedName}).
 */
final class BuiltTemplates implements TemplateKind {
    /** A built template as named, with the tag the name carried (null: none). */
    record Named(BuiltTemplate template, String tag) {
        String tagOrDefault() {
            return tag == null ? TemplateName.DEFAULT_TAG : tag;
        }
    }

    private final TemplateBuilds builds;

    BuiltTemplates(TemplateBuilds builds) {
        this.builds = builds;
    }

    TemplateBuildStore store() {
        return builds.store();
    }

    /**
     * The caller's built template {@code idOrName} names: a template id (of the caller's team) or
     * {@code [team/]alias}, either with an optional {@code :tag}.
     *
     * @return empty when the caller's team has no such template
     * @throws ApiException 400 for a malformed name or another team's namespace; 403 for another
     *     team's template id
     */
    Optional<Named> find(Principal who, String idOrName) {
        String raw = idOrName.trim();
        String tag = null;
        String base = raw;
        int colon = raw.lastIndexOf(':');
        if (colon >= 0) {
            tag = TemplateName.checkTag(raw.substring(colon + 1));
            base = raw.substring(0, colon);
        }
        if (base.indexOf('/') < 0) {
            Optional<BuiltTemplate> byId = store().template(base);
            if (byId.isPresent()) {
                if (!byId.get().team().equals(who.team())) {
                    throw ApiException.e2b(403, "template '" + base + "' belongs to another team");
                }
                return Optional.of(new Named(byId.get(), tag));
            }
        }
        TemplateName name = TemplateName.parse(base).requireTeam(who.team());
        String t = tag;
        return store().byAlias(who.team(), name.alias()).map(b -> new Named(b, t));
    }

    /** As {@link #find}, 404 "template 'x' not found" when missing. */
    Named require(Principal who, String idOrName) {
        return find(who, idOrName).orElseThrow(() -> ApiException.e2b(404, "template '" + idOrName + "' not found"));
    }

    /** The build {@code named}'s tag points at; 404 naming the tag when it has none. */
    Build tagged(Named named) {
        String tag = named.tagOrDefault();
        String buildId = store().tags(named.template().templateId()).stream().filter(t -> t.tag().equals(tag)).findFirst()
                .orElseThrow(() -> noSuchTag(named.template(), tag)).buildId();
        return store().build(buildId).orElseThrow(() -> ApiException.e2b(404, "build " + buildId + " not found"));
    }

    /** 404 for a tag no build holds; when the template never had a ready build, says what its last build did instead. */
    private ApiException noSuchTag(BuiltTemplate t, String tag) {
        List<Build> all = store().builds(t.templateId());
        String why = "";
        if (all.stream().noneMatch(b -> TemplateBuildStore.READY.equals(b.status())) && !all.isEmpty()) {
            Build last = all.get(0);
            why = ": the template has no ready build; its last build " + last.buildId() + " is " + last.status()
                    + (last.reasonMessage() == null ? "" : " (" + (last.reasonStep() == null ? "" : "step " + last.reasonStep()
                    + ": ") + last.reasonMessage() + ")");
        }
        return ApiException.e2b(404, "tag '" + tag + "' of template '" + t.alias() + "' not found" + why);
    }

    @Override
    public Optional<Template> resolve(Principal who, String templateId) {
        Optional<Named> named;
        try {
            named = find(who, templateId);
        } catch (ApiException e) {
            if (e.status() == 400 && !templateId.contains("/")) {
                return Optional.empty(); // not a built template's name: the caller's 404 lists what exists
            }
            throw e;
        }
        if (named.isEmpty()) {
            return Optional.empty();
        }
        Build b = tagged(named.get());
        return Optional.of(builds.served(b).orElseThrow(() -> ApiException.e2b(503, "template '" + templateId
                + "' has no ready build to serve (build " + b.buildId() + " is " + b.status() + ")")));
    }

    @Override
    public Optional<TemplateLabel> label(String hubTemplate) {
        if (!hubTemplate.startsWith(TemplateBuilds.SYNCED_PREFIX)) {
            return Optional.empty();
        }
        String buildId = hubTemplate.substring(TemplateBuilds.SYNCED_PREFIX.length());
        return store().build(buildId).flatMap(b -> store().template(b.templateId())).map(t -> {
            // the name a create resolves back to this build: the alias alone means its default tag
            List<String> tags = store().tags(t.templateId()).stream().filter(g -> g.buildId().equals(buildId))
                    .map(TemplateBuildStore.Tag::tag).toList();
            String name = tags.isEmpty() || tags.contains(TemplateName.DEFAULT_TAG) ? t.alias() : t.alias() + ":" + tags.get(0);
            return new TemplateLabel(t.templateId(), name);
        });
    }

    @Override
    public List<String> names(Principal who) {
        return store().templates(who.team()).stream().map(BuiltTemplate::alias).toList();
    }

    @Override
    public boolean delete(Principal who, String templateId) {
        Optional<Named> named = find(who, templateId);
        return named.isPresent() && builds.delete(named.get().template().templateId());
    }
}
