package io.agentbox.worker.runtime;

import io.grpc.Status;
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
 * @param user {@value #USER} (the default when null or empty) or {@value #ROOT}; runtimes without
 *     root inside refuse {@value #ROOT} with PERMISSION_DENIED
 */
public record LaunchSpec(String cmd, List<String> args, Map<String, String> env, String cwd, boolean stdin,
                         TerminalSize pty, String user) {
    public static final String USER = "user";
    public static final String ROOT = "root";

    public LaunchSpec {
        args = List.copyOf(args);
        env = Map.copyOf(env);
        if (pty != null && !stdin) {
            throw new IllegalArgumentException("a pty process reads its input from the stdin pipe");
        }
        user = user == null || user.isEmpty() ? USER : user;
        requireUser(user);
    }

    public LaunchSpec(String cmd, List<String> args, Map<String, String> env, String cwd, boolean stdin,
                      TerminalSize pty) {
        this(cmd, args, env, cwd, stdin, pty, USER);
    }

    public LaunchSpec(String cmd, List<String> args, Map<String, String> env, String cwd, boolean stdin) {
        this(cmd, args, env, cwd, stdin, null, USER);
    }

    public boolean asRoot() {
        return ROOT.equals(user);
    }

    /** @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT for a user other than "user" and "root" */
    public static String requireUser(String user) {
        if (!USER.equals(user) && !ROOT.equals(user)) {
            String shown = user.length() > 64 ? user.substring(0, 64) + "..." : user;
            throw Status.INVALID_ARGUMENT.withDescription("unknown user '" + shown + "': sandboxes have '"
                    + USER + "' and '" + ROOT + "'").asRuntimeException();
        }
        return user;
    }
}
