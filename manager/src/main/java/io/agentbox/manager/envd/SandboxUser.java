package io.agentbox.manager.envd;

import io.agentbox.manager.http.InputText;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The user a request asks to act as. envd selects it with {@code Authorization: Basic
 * base64("<user>:")} on RPCs and {@code ?username=} on {@code /files} (docs/e2b-wire.md#sandbox-user).
 * AgentBox sandboxes have {@value #USER} (uid 1000, the default) and {@value #ROOT} (uid 0); any
 * other name is refused as envd refuses a user it cannot look up, never silently run as
 * {@value #USER}. The hub passes the user on in the worker request's {@code user} field.
 */
final class SandboxUser {
    static final String USER = "user";
    static final String ROOT = "root";
    private static final int MAX_SHOWN = 64;

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

    /** True for no user (the default), {@value #USER} and {@value #ROOT}. */
    static boolean isKnown(String user) {
        return user == null || user.isEmpty() || USER.equals(user) || ROOT.equals(user);
    }

    /**
     * A {@link #isKnown known} user as the worker takes it: {@value #USER}, {@value #ROOT}, or
     * empty when the request names none, so the worker applies the sandbox's default user (a built
     * template's final USER, docs/e2b-wire.md#sandbox-defaults; {@value #USER} otherwise).
     */
    static String normalize(String user) {
        return user == null || user.isEmpty() ? "" : ROOT.equals(user) ? ROOT : USER;
    }

    /** "user 'X' does not exist in this sandbox: ..." (the SDK shows it as an AuthenticationError). */
    static String unknownMessage(String user) {
        String shown = user.length() > MAX_SHOWN ? user.substring(0, MAX_SHOWN) + "…" : user;
        return "user '" + InputText.quote(shown) + "' does not exist in this sandbox: AgentBox sandboxes run commands "
                + "and file operations as '" + USER + "' (uid 1000, the default) or '" + ROOT + "' (uid 0)";
    }
}
