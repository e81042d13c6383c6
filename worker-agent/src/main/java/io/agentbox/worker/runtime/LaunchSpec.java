package io.agentbox.worker.runtime;

import java.util.List;
import java.util.Map;

/**
 * What to run inside a sandbox.
 *
 * @param cmd executable (absolute, or looked up on PATH)
 * @param args arguments after {@code cmd}
 * @param env variables added to the user's base environment (PATH, HOME, USER, LOGNAME); later
 *     entries of the caller's merge win, so the map already holds the final values
 * @param cwd absolute working directory inside the sandbox
 * @param stdin true: stdin is a pipe ({@link LaunchedProcess#stdin()}); false: /dev/null
 * @param pty null: plain pipes; else run on a pseudo-terminal of this size (stdin must be true)
 */
public record LaunchSpec(String cmd, List<String> args, Map<String, String> env, String cwd, boolean stdin,
                         TerminalSize pty) {
    public LaunchSpec {
        args = List.copyOf(args);
        env = Map.copyOf(env);
        if (pty != null && !stdin) {
            throw new IllegalArgumentException("a pty process reads its input from the stdin pipe");
        }
    }

    public LaunchSpec(String cmd, List<String> args, Map<String, String> env, String cwd, boolean stdin) {
        this(cmd, args, env, cwd, stdin, null);
    }
}
