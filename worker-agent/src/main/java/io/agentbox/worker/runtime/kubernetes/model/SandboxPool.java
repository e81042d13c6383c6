package io.agentbox.worker.runtime.kubernetes.model;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A warm pool of sandbox pods in one namespace ({@code sandboxpools.agentbox.io}, short
 * {@code sbp}). The worker creates one per hub template whose runtime is {@code kubernetes};
 * the CRD is {@code deploy/crds/sandboxpools.agentbox.io.yaml}.
 */
@Group(Crds.GROUP)
@Version(Crds.VERSION)
@Plural("sandboxpools")
@ShortNames("sbp")
public class SandboxPool extends CustomResource<SandboxPoolSpec, SandboxPoolStatus> implements Namespaced {
    @Override
    protected SandboxPoolSpec initSpec() {
        return new SandboxPoolSpec();
    }

    @Override
    protected SandboxPoolStatus initStatus() {
        return new SandboxPoolStatus();
    }
}
