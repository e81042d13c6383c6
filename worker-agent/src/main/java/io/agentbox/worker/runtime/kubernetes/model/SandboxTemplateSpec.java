package io.agentbox.worker.runtime.kubernetes.model;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Desired shape of sandbox pods. The first container is the sandbox: commands and file
 * operations are exec'd there, so its image needs {@code /bin/sh}, coreutils and GNU find.
 * There is no idle image: pods run the sandbox image from the start and are deleted on release
 * (see docs/kubernetes-runtime.md for why).
 */
public class SandboxTemplateSpec {
    /** Pod metadata and spec; the worker adds its pool labels and keeps the container running. */
    private PodTemplateSpec podTemplate;
    /** In-pod servers a client may reach (for example envd on 49983). */
    private List<SandboxTemplatePort> runtimes = new ArrayList<>();
    /** Seconds a new pod may take to become ready before it is deleted; 0 or absent = 120. */
    private Integer defaultStartupTimeoutSeconds;
    /** Seconds a claimed sandbox lives when the claim sets no timeout; 0 or absent = the hub template's. */
    private Integer defaultIdleTimeoutSeconds;

    public PodTemplateSpec getPodTemplate() {
        return podTemplate;
    }

    public void setPodTemplate(PodTemplateSpec podTemplate) {
        this.podTemplate = podTemplate;
    }

    public List<SandboxTemplatePort> getRuntimes() {
        return runtimes;
    }

    public void setRuntimes(List<SandboxTemplatePort> runtimes) {
        this.runtimes = runtimes;
    }

    public Integer getDefaultStartupTimeoutSeconds() {
        return defaultStartupTimeoutSeconds;
    }

    public void setDefaultStartupTimeoutSeconds(Integer defaultStartupTimeoutSeconds) {
        this.defaultStartupTimeoutSeconds = defaultStartupTimeoutSeconds;
    }

    public Integer getDefaultIdleTimeoutSeconds() {
        return defaultIdleTimeoutSeconds;
    }

    public void setDefaultIdleTimeoutSeconds(Integer defaultIdleTimeoutSeconds) {
        this.defaultIdleTimeoutSeconds = defaultIdleTimeoutSeconds;
    }
}
