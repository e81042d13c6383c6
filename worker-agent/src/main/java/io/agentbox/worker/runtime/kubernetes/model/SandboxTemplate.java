package io.agentbox.worker.runtime.kubernetes.model;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * How sandbox pods of one template look ({@code sandboxtemplates.agentbox.io}, cluster-scoped,
 * short {@code sbt}); pools in any namespace refer to it by name. The CRD is
 * {@code deploy/crds/sandboxtemplates.agentbox.io.yaml}.
 */
@Group(Crds.GROUP)
@Version(Crds.VERSION)
@Plural("sandboxtemplates")
@ShortNames("sbt")
public class SandboxTemplate extends CustomResource<SandboxTemplateSpec, SandboxTemplateStatus> {
    @Override
    protected SandboxTemplateSpec initSpec() {
        return new SandboxTemplateSpec();
    }

    @Override
    protected SandboxTemplateStatus initStatus() {
        return new SandboxTemplateStatus();
    }
}
