package io.agentbox.worker.pool;

import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxFiles;

/**
 * A sandbox with no processes, for pool tests whose subject is the pool's policy (refills,
 * waiting claims); the real runtimes are tested with real sandboxes elsewhere.
 */
final class ObjectSandbox implements RuntimeSandbox {
    private final String id;
    private volatile boolean alive = true;

    ObjectSandbox(String id) {
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public boolean isAlive() {
        return alive;
    }

    @Override
    public LaunchedProcess launch(LaunchSpec spec) {
        throw new UnsupportedOperationException();
    }

    @Override
    public SandboxFiles files() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void kill() {
        alive = false;
    }
}
