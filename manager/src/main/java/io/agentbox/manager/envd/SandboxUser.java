package io.agentbox.manager.envd;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The user a request asks to act as. envd selects it with {@code Authorization: Basic
 * base64("<user>:")} on RPCs and {@code ?username=} on {@code /files} (e2b-protocol.md §2).
 * AgentBox sandboxes have exactly one user, {@value #USER}; asking for another (commonly
 * {@code root}) is refused instead of silently running as {@code user}.
 */
final class SandboxUser {
    static final String USER = "user";

    private SandboxUser() {}

    /** The user named by a Basic authorization header; null when absent or not Basic. */
    static String fromBasicAuth(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return null;
        }
        try {
            String decoded = new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            return colon < 0 ? decoded : decoded.substring(0, colon);
        } catch (IllegalArgumentException e) {
            return "(malformed authorization)";
        }
    }

    /** True for no user (the default) and for {@value #USER}. */
    static boolean isKnown(String user) {
        return user == null || user.isEmpty() || USER.equals(user);
    }

    static String unknownMessage(String user) {
        String shown = user.length() > 64 ? user.substring(0, 64) + "…" : user;
        return "user '" + shown + "' does not exist in this sandbox: AgentBox sandboxes run commands and file "
                + "operations as '" + USER + "' (no root inside)";
    }
}
