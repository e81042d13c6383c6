package io.agentbox.worker;

/** Test helpers other packages' tests share. */
public final class IsolationTestAccess {
    private IsolationTestAccess() {}

    /** Processes in a local sandbox's pids cgroup; 0 once it is gone. */
    public static long sandboxProcesses(String id) {
        return IsolationTest.sandboxProcesses(id);
    }
}
