package io.agentbox.worker.pool;

import io.agentbox.protocol.v1.CreateSandboxRequest;

/**
 * What a claimed sandbox does at its end time, fixed at create and kept across pause and resume
 * (a resume must not reset it: e2b-dev/E2B #875; docs/e2b-wire.md#auto-pause-and-auto-resume).
 *
 * @param autoPause pause at the end time instead of being killed
 * @param dropMemory with {@code autoPause}: the timer's pause kills the processes and keeps the files
 * @param autoResume recorded for the hub, which resumes the sandbox when traffic reaches it paused
 */
record Lifecycle(boolean autoPause, boolean dropMemory, boolean autoResume) {
    static final Lifecycle KILL = new Lifecycle(false, false, false);

    static Lifecycle of(CreateSandboxRequest req) {
        return new Lifecycle(req.getAutoPause(), req.getAutoPause() && req.getAutoPauseDropMemory(), req.getAutoResume());
    }
}
