package io.agentbox.worker.runtime.kubernetes.model;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** Observed state of a {@link SandboxTemplate}: conditions only (none are written yet). */
public class SandboxTemplateStatus {
    private List<Condition> conditions = new ArrayList<>();

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }
}
