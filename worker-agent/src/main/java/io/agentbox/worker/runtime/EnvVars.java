package io.agentbox.worker.runtime;

import io.grpc.Status;
import java.util.Map;
import java.util.regex.Pattern;

/** Rules for environment variables passed into sandboxes (create-time and per command). */
public final class EnvVars {
    /** POSIX shell-compatible names: a letter or '_', then letters, digits or '_'. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /**
     * Most bytes (names, values and one '=' each) one set of variables may take: every command
     * gets the sandbox's and its own variables in one exec, whose argv and environment the worker
     * caps at 512 KiB, so a create past this would leave a sandbox where no command can start.
     */
    public static final int MAX_TOTAL_BYTES = 128 * 1024;

    private EnvVars() {}

    /**
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT naming the first bad variable: a name
     *     outside {@code [A-Za-z_][A-Za-z0-9_]*}, or a value holding a NUL character; or saying
     *     the variables take more than {@link #MAX_TOTAL_BYTES} bytes
     */
    public static void requireValid(Map<String, String> env) {
        long total = 0;
        for (Map.Entry<String, String> e : env.entrySet()) {
            total += e.getKey().length() + e.getValue().length() + 1L;
        }
        if (total > MAX_TOTAL_BYTES) {
            throw Status.INVALID_ARGUMENT.withDescription("environment variables take " + total + " bytes, more than the "
                    + MAX_TOTAL_BYTES + " a sandbox accepts").asRuntimeException();
        }
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
