package io.agentbox.worker.runtime;

import io.grpc.Status;
import java.util.Map;
import java.util.regex.Pattern;

/** Rules for environment variables passed into sandboxes (create-time and per command). */
public final class EnvVars {
    /** POSIX shell-compatible names: a letter or '_', then letters, digits or '_'. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private EnvVars() {}

    /**
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT naming the first bad variable: a name
     *     outside {@code [A-Za-z_][A-Za-z0-9_]*}, or a value holding a NUL character
     */
    public static void requireValid(Map<String, String> env) {
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!NAME.matcher(e.getKey()).matches()) {
                throw Status.INVALID_ARGUMENT.withDescription("invalid environment variable name '" + e.getKey()
                        + "': use letters, digits and '_', not starting with a digit").asRuntimeException();
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw Status.INVALID_ARGUMENT.withDescription("environment variable '" + e.getKey()
                        + "' holds a NUL character").asRuntimeException();
            }
        }
    }
}
