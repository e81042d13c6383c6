package io.agentbox.worker.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.image.RegistryHost;
import java.io.IOException;
import java.util.Iterator;

/**
 * Credentials for one registry, pushed by the hub in the cluster config: setting
 * {@code registry.auth.<host[:port]>} (a key of {@code PUT /internal/clusters/{id}/config}
 * {@code settings}) with the value {@code {"username":"…","password":"…"}} (for GHCR and Docker Hub
 * the password may be an access token). The registry client sends them as basic auth, or to the
 * token service a registry's bearer challenge names.
 *
 * <p>{@link #toString()} never shows the password; neither do error messages.
 *
 * @param username 1-256 characters
 * @param password 1-4096 characters
 */
public record RegistryAuth(String username, String password) {
    /** Setting-name prefix; the rest of the name is the registry's {@code host[:port]}. */
    public static final String SETTING_PREFIX = "registry.auth.";
    static final int MAX_USERNAME = 256;
    static final int MAX_PASSWORD = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();

    public RegistryAuth {
        if (username == null || username.isEmpty() || username.length() > MAX_USERNAME) {
            throw new IllegalArgumentException("username must be 1-" + MAX_USERNAME + " characters");
        }
        if (password == null || password.isEmpty() || password.length() > MAX_PASSWORD) {
            throw new IllegalArgumentException("password must be 1-" + MAX_PASSWORD + " characters");
        }
    }

    /** True for a setting name of this convention. */
    public static boolean isSetting(String name) {
        return name.startsWith(SETTING_PREFIX);
    }

    /**
     * The registry a setting name is for.
     *
     * @throws IllegalArgumentException when the rest of the name is not a registry {@code host[:port]}
     */
    public static String registryOf(String settingName) {
        String host = settingName.substring(SETTING_PREFIX.length());
        try {
            return RegistryHost.parse(host, false);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("setting '" + settingName + "' must name a registry as "
                    + SETTING_PREFIX + "HOST[:PORT]: " + e.getMessage());
        }
    }

    /**
     * Parses a setting value.
     *
     * @throws IllegalArgumentException when it is not a JSON object with exactly the string fields
     *     {@code username} and {@code password}; the message never quotes the value
     */
    public static RegistryAuth parse(String value) {
        JsonNode n = readObject(value);
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!f.equals("username") && !f.equals("password")) {
                throw new IllegalArgumentException("unknown field '" + clip(f) + "'; expected {\"username\",\"password\"}");
            }
        }
        JsonNode user = n.get("username");
        JsonNode pass = n.get("password");
        if (user == null || !user.isTextual()) {
            throw new IllegalArgumentException("'username' must be a string");
        }
        if (pass == null || !pass.isTextual()) {
            throw new IllegalArgumentException("'password' must be a string");
        }
        return new RegistryAuth(user.textValue(), pass.textValue());
    }

    /**
     * The username of a setting value for display, without the password; null when the value has
     * no string username.
     */
    public static String usernameOf(String value) {
        try {
            JsonNode user = readObject(value).get("username");
            return user != null && user.isTextual() ? user.textValue() : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The setting value: {@code {"username":…,"password":…}}. */
    public String toSettingValue() {
        ObjectNode o = JSON.createObjectNode().put("username", username).put("password", password);
        return o.toString();
    }

    private static JsonNode readObject(String value) {
        JsonNode n;
        try {
            n = value == null ? null : JSON.readTree(value);
        } catch (IOException e) {
            n = null;
        }
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("must be a JSON object {\"username\":\"…\",\"password\":\"…\"}");
        }
        return n;
    }

    private static String clip(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "…" : s;
    }

    @Override
    public String toString() {
        return "RegistryAuth[username=" + username + ", password=<hidden>]";
    }
}
