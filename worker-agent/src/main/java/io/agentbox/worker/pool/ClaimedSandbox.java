package io.agentbox.worker.pool;

import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.process.ProcessTable;
import io.agentbox.worker.runtime.RuntimeSandbox;
import java.util.LinkedHashMap;
import java.util.Map;

/** A sandbox handed out by a claim: the runtime handle plus claim-time settings. */
public final class ClaimedSandbox {
    private final RuntimeSandbox sandbox;
    private final Template template;
    private final String clusterId;
    private final String owner;
    private final Map<String, String> metadata;
    /** Create-time env vars (reported in SandboxInfo). */
    private final Map<String, String> envVars;
    /** Template env overlaid with create-time env: the base of every command's environment. */
    private final Map<String, String> effectiveEnv;
    private final long startedAtMs;
    private volatile long endAtMs;
    private final ProcessTable processes;
    /** Gives back what the sandbox held in its pool (a host slot for local sandboxes). */
    private final Runnable onRelease;

    ClaimedSandbox(RuntimeSandbox sandbox, Template template, String clusterId, String owner,
                   Map<String, String> metadata, Map<String, String> envVars, long startedAtMs, long endAtMs,
                   Runnable onRelease) {
        this.sandbox = sandbox;
        this.template = template;
        this.clusterId = clusterId;
        this.owner = owner;
        this.metadata = Map.copyOf(metadata);
        this.envVars = Map.copyOf(envVars);
        Map<String, String> env = new LinkedHashMap<>(template.getEnvVarsMap());
        env.putAll(envVars);
        this.effectiveEnv = Map.copyOf(env);
        this.startedAtMs = startedAtMs;
        this.endAtMs = endAtMs;
        this.processes = new ProcessTable(sandbox);
        this.onRelease = onRelease;
    }

    void released() {
        onRelease.run();
    }

    public String id() {
        return sandbox.id();
    }

    public RuntimeSandbox runtime() {
        return sandbox;
    }

    public ProcessTable processes() {
        return processes;
    }

    public String owner() {
        return owner;
    }

    public String templateName() {
        return template.getName();
    }

    public Map<String, String> effectiveEnv() {
        return effectiveEnv;
    }

    public long endAtMs() {
        return endAtMs;
    }

    void setEndAtMs(long endAtMs) {
        this.endAtMs = endAtMs;
    }

    public SandboxInfo info() {
        return SandboxInfo.newBuilder()
                .setSandboxId(id())
                .setTemplate(template.getName())
                .setClusterId(clusterId)
                .putAllMetadata(metadata)
                .setStartedAtMs(startedAtMs)
                .setEndAtMs(endAtMs)
                .setState("running")
                .setCpuCount(HostShares.orHost(template.getCpuCount(), HostShares.CPU_COUNT))
                .setMemoryMb(HostShares.orHost(template.getMemoryMb(), HostShares.MEMORY_MB))
                .setDiskSizeMb(template.getDiskSizeMb())
                .setOwner(owner)
                .putAllEnvVars(envVars)
                .build();
    }
}
