package io.agentbox.worker.build;

import io.agentbox.worker.runtime.SandboxCommand;

/**
 * Where a build's log lines go as they are made (E2B's {@code logEntries}: level, message,
 * step). Called from the build's threads; implementations apply their own bound and may block
 * the build while the reader catches up.
 */
@FunctionalInterface
public interface BuildLog {
    /** Longest message kept, in chars; longer lines are cut (output of a step can be anything). */
    int MAX_LINE_CHARS = SandboxCommand.MAX_LINE_CHARS;

    /**
     * @param level {@code debug}, {@code info}, {@code warn} or {@code error}
     * @param step {@code "base"}, a step number, {@code "finalize"}, or empty for lines of the whole build
     */
    void line(String level, String step, String message);

    BuildLog NONE = (level, step, message) -> { };
}
