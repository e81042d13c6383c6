package io.agentbox.manager.e2b;

/**
 * How a sandbox names the template it started from in E2B answers (docs/e2b-wire.md#response-shapes).
 *
 * @param templateId the E2B template id ({@code templateID}): a configured template's name, a built
 *     template's id, a snapshot's template id
 * @param alias the name reported as {@code alias}, which {@code Sandbox.create} accepts back: a
 *     configured template's name, a built template's alias (with {@code :tag} when its default tag
 *     does not point at the sandbox's build but another tag does), a snapshot's full id
 *     ({@code <templateId>:<tag>} or {@code <team>/<name>:<tag>})
 */
public record TemplateLabel(String templateId, String alias) {
    /** A hub template that is not served for another kind: reported under its own name. */
    static TemplateLabel of(String hubTemplate) {
        return new TemplateLabel(hubTemplate, hubTemplate);
    }
}
