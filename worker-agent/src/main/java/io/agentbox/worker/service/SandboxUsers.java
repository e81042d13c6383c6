package io.agentbox.worker.service;

import io.agentbox.worker.runtime.LaunchSpec;
import io.grpc.Status;

/**
 * The {@code user} field of process.proto and filesystem.proto requests: who runs a command or a file operation, and
 * whose home relative paths resolve against. Sandboxes have {@value LaunchSpec#USER} (uid 1000,
 * {@value #USER_HOME}, the default) and {@value LaunchSpec#ROOT} (uid 0, {@value #ROOT_HOME}).
 */
final class SandboxUsers {
    static final String USER_HOME = "/home/user";
    static final String ROOT_HOME = "/root";
    private static final int MAX_SHOWN = 64;

    private SandboxUsers() {}

    /**
     * @param requested the request's user field; empty means {@value LaunchSpec#USER}
     * @return {@value LaunchSpec#USER} or {@value LaunchSpec#ROOT}
     * @throws io.grpc.StatusRuntimeException UNAUTHENTICATED "user 'X' does not exist in this
     *     sandbox: ..." for any other name, as envd answers an unknown user (docs/e2b-wire.md#sandbox-user)
     */
    static String require(String requested) {
        if (requested == null || requested.isEmpty()) {
            return LaunchSpec.USER;
        }
        if (requested.equals(LaunchSpec.USER) || requested.equals(LaunchSpec.ROOT)) {
            return requested;
        }
        throw Status.UNAUTHENTICATED.withDescription("user '" + shown(requested) + "' does not exist in this sandbox: "
                + "sandboxes have '" + LaunchSpec.USER + "' (the default) and '" + LaunchSpec.ROOT + "'").asRuntimeException();
    }

    /** The home directory of a user {@link #require} returned. */
    static String home(String user) {
        return LaunchSpec.ROOT.equals(user) ? ROOT_HOME : USER_HOME;
    }

    /** At most {@value #MAX_SHOWN} characters, controls escaped, so the name is safe to echo. */
    private static String shown(String name) {
        String cut = name.length() > MAX_SHOWN ? name.substring(0, MAX_SHOWN) + "..." : name;
        StringBuilder out = new StringBuilder(cut.length());
        cut.codePoints().forEach(cp -> {
            boolean loneSurrogate = cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE;
            if (Character.isISOControl(cp) || Character.getType(cp) == Character.FORMAT || loneSurrogate) {
                out.append(String.format("\\u%04X", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }
}
