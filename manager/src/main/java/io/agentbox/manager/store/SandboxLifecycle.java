package io.agentbox.manager.store;

/**
 * What a sandbox does at its end time and when traffic reaches it paused, fixed at create
 * (E2B's create fields {@code autoPause}, {@code autoPauseMemory}, {@code autoResume.enabled};
 * docs/e2b-wire.md#auto-pause-and-auto-resume) and kept across pause and resume.
 *
 * @param autoPause  pause at the end time instead of being killed
 * @param keepMemory with {@code autoPause}: that pause keeps the processes (false: files only)
 * @param autoResume traffic to the paused sandbox resumes it
 */
public record SandboxLifecycle(boolean autoPause, boolean keepMemory, boolean autoResume) {
    /** The default: killed at the end time. */
    public static final SandboxLifecycle KILL = new SandboxLifecycle(false, true, false);
}
