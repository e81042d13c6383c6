package io.agentbox.worker.pool;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.metrics.MetricRing;
import io.agentbox.worker.metrics.MetricsSampler;
import io.agentbox.worker.process.ProcessTable;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A sandbox handed out by a claim: the runtime handle plus claim-time settings, its state
 * (running or paused) and its metric samples.
 */
public final class ClaimedSandbox implements MetricsSampler.Target {
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
    private final Lifecycle lifecycle;
    private final MetricRing metrics;
    /** Written under this object's lock (transitions), read without it (request checks). */
    private volatile boolean paused;
    private volatile long pausedAtMs;
    private volatile boolean memoryKept;
    private final Object oomLock = new Object();
    /** OOM kills already counted; guarded by oomLock. */
    private long oomKillsSeen;

    ClaimedSandbox(RuntimeSandbox sandbox, Template template, String clusterId, String owner,
                   Map<String, String> metadata, Map<String, String> envVars, long startedAtMs, long endAtMs,
                   Lifecycle lifecycle, Runnable onRelease) {
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
        this.lifecycle = lifecycle;
        this.metrics = new MetricRing(cpuCount());
        this.onRelease = onRelease;
    }

    void released() {
        onRelease.run();
    }

    /** The template it was claimed from. */
    public Template template() {
        return template;
    }

    /**
     * OOM kills since the last call (0 where the runtime cannot tell). A count that went down is a
     * new cgroup (a reset): all of it is new.
     */
    long takeOomKills() {
        synchronized (oomLock) { // not this: a pause holds that for seconds
            long now = sandbox.oomKills();
            if (now < 0) {
                return 0;
            }
            long fresh = now >= oomKillsSeen ? now - oomKillsSeen : now;
            oomKillsSeen = now;
            return fresh;
        }
    }

    public String id() {
        return sandbox.id();
    }

    @Override
    public RuntimeSandbox runtime() {
        return sandbox;
    }

    @Override
    public MetricRing metrics() {
        return metrics;
    }

    Lifecycle lifecycle() {
        return lifecycle;
    }

    public boolean isPaused() {
        return paused;
    }

    /**
     * For calls that reach into the sandbox (commands, files, ports): they would hang on frozen
     * processes, so a paused sandbox refuses them at once.
     *
     * @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION + {@link ErrorReason#SANDBOX_PAUSED}
     */
    public ClaimedSandbox requireRunning() {
        if (paused) {
            throw ErrorReason.SANDBOX_PAUSED.exception(Status.Code.FAILED_PRECONDITION,
                    "sandbox '" + id() + "' is paused; resume it first");
        }
        return this;
    }

    /**
     * Pauses: freezes every process (memory stays), or with {@code dropMemory} kills them and
     * keeps the files, then freezes what is left (the init).
     *
     * @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION + {@link ErrorReason#SANDBOX_CONFLICT}
     *     when already paused; UNIMPLEMENTED from a runtime that cannot freeze
     */
    synchronized void pause(boolean dropMemory) {
        if (paused) {
            throw ErrorReason.SANDBOX_CONFLICT.exception(Status.Code.FAILED_PRECONDITION,
                    "sandbox '" + id() + "' is already paused");
        }
        if (dropMemory) {
            sandbox.killProcesses();
        }
        sandbox.freeze();
        pausedAtMs = System.currentTimeMillis();
        memoryKept = !dropMemory;
        paused = true;
    }

    /**
     * Resumes a paused sandbox with end {@code endAtMs}, killing its processes first with
     * {@code dropMemory}; on a running one only moves a later end in.
     *
     * @return true when it was paused
     */
    synchronized boolean resume(long endAtMs, boolean dropMemory) {
        if (!paused) {
            if (endAtMs > this.endAtMs) {
                this.endAtMs = endAtMs;
            }
            return false;
        }
        if (dropMemory) {
            sandbox.killProcesses(); // leaves it thawed
        } else {
            sandbox.thaw();
        }
        this.endAtMs = endAtMs;
        paused = false;
        pausedAtMs = 0;
        return true;
    }

    /**
     * Resets the sandbox to its start (the runtime's {@link RuntimeSandbox#reset}) under the same
     * lock as {@link #pause} and {@link #resume}: a pause must never freeze a container a reset is
     * replacing (its cgroup may be gone half-way), and a reset must not start a fresh container
     * under a sandbox that is being paused. Concurrent lifecycle calls on one sandbox therefore
     * run one after the other; whichever comes second sees the state the first left.
     *
     * @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION + {@link ErrorReason#SANDBOX_PAUSED}
     *     when paused (its pause state would not match the new container); the runtime's errors
     */
    public synchronized void reset() {
        requireRunning();
        sandbox.reset();
    }

    /** An operation that may fail with an {@link IOException}. */
    @FunctionalInterface
    public interface LifecycleOp<T> {
        T run() throws IOException;
    }

    /**
     * Runs {@code op} under the lifecycle lock of {@link #reset}: for operations that freeze and
     * thaw the sandbox themselves (a snapshot's capture), so that a pause cannot land between
     * their freeze and thaw (and be undone by the thaw) nor a reset swap the container under them.
     */
    public synchronized <T> T exclusive(LifecycleOp<T> op) throws IOException {
        return op.run();
    }

    private int cpuCount() {
        return HostShares.orHost(template.getCpuCount(), HostShares.CPU_COUNT);
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
                .setState(paused ? "paused" : "running")
                .setCpuCount(cpuCount())
                .setMemoryMb(HostShares.orHost(template.getMemoryMb(), HostShares.MEMORY_MB))
                .setDiskSizeMb(template.getDiskSizeMb())
                .setOwner(owner)
                .putAllEnvVars(envVars)
                .setAutoPause(lifecycle.autoPause())
                .setAutoPauseDropMemory(lifecycle.dropMemory())
                .setAutoResume(lifecycle.autoResume())
                .setPausedAtMs(paused ? pausedAtMs : 0)
                .setMemoryKept(paused && memoryKept)
                .build();
    }
}
