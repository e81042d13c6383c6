package io.agentbox.manager.e2b;

import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.Template;
import java.util.List;
import java.util.Optional;

/**
 * A kind of template-like thing the E2B API names by a template id: templates built through
 * {@code Template.build}, snapshots. E2B puts them in one name space
 * (docs/e2b-wire.md#deleting-a-snapshot, docs/e2b-wire.md#starting-from-a-snapshot): {@code POST /v2/sandboxes} takes any of them as
 * {@code templateID} and {@code DELETE /templates/{id}} deletes any of them. The control plane asks
 * each registered kind in turn; the hub's configured templates (management API) come first.
 */
public interface TemplateKind {
    /**
     * The template a sandbox of {@code templateId} starts from, as {@code who} may use it (ids in
     * every form the SDK sends: {@code id}, {@code id:tag}, {@code alias}, {@code alias:tag},
     * {@code team/alias[:tag]}); empty when this kind does not know the id.
     *
     * @throws io.agentbox.manager.http.ApiException e.g. 400 for a namespace that is not the caller's team
     */
    Optional<Template> resolve(Principal who, String templateId);

    /**
     * Deletes {@code templateId} when this kind knows it for {@code who}.
     *
     * @return true when deleted (the route answers 204), false when this kind does not know it
     */
    boolean delete(Principal who, String templateId);

    /**
     * The E2B names of the hub template {@code hubTemplate} when this kind serves sandboxes through
     * it (a built template's {@code built-<buildId>}, a snapshot's {@code snap-...}): what a
     * sandbox's {@code templateID} and {@code alias} report, so that a create accepts them back.
     *
     * @return empty when {@code hubTemplate} is not one of this kind's
     */
    default Optional<TemplateLabel> label(String hubTemplate) {
        return Optional.empty();
    }

    /** Names of this kind {@code who} can start sandboxes of, for the hint of a 404 (may be empty). */
    default List<String> names(Principal who) {
        return List.of();
    }
}
