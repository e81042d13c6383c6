package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Where a client command finds the hub's URL and its API key, each looked up on its own, first
 * found wins:
 *
 * <ol>
 *   <li>the flags {@code --url}, {@code --api-key};
 *   <li>the environment: {@code AGENTBOX_URL}, {@code AGENTBOX_API_KEY}, then the E2B SDK's
 *       {@code E2B_API_URL}, {@code E2B_API_KEY} (what {@code agentbox standalone} prints);
 *   <li>the config file: {@code $AGENTBOX_CONFIG}, else {@code $XDG_CONFIG_HOME/agentbox/config.json},
 *       else {@code ~/.config/agentbox/config.json}: {@code {"url": "...", "apiKey": "..."}}
 *       (written by {@code agentbox config set}; mode 0600 since it holds a key).
 * </ol>
 *
 * <p>Blank values count as unset.
 */
public final class ClientConfig {
    /** Keys of the config file, as {@code agentbox config set} names them. */
    public static final Map<String, String> FILE_KEYS = Map.of("url", "url", "api-key", "apiKey");
    /** Largest config file read (it holds two strings). */
    static final long MAX_FILE_BYTES = 64 * 1024;

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ClientConfig() {}

    /**
     * One resolved value and where it came from ({@code "--url"}, {@code "$E2B_API_KEY"},
     * {@code "config file /root/.config/agentbox/config.json"}); both null when nothing set it.
     */
    public record Value(String value, String source) {
        public boolean isSet() {
            return value != null;
        }
    }

    /** The URL (without a trailing slash) and key as far as they are set. */
    public record Resolved(Value url, Value apiKey, Path file) {
        /**
         * The URL and key, both required.
         *
         * @throws ClientException naming every place the missing value may be given
         */
        public Settings require() {
            if (!url.isSet()) {
                throw new ClientException("no hub URL: pass --url, set AGENTBOX_URL (or E2B_API_URL), "
                        + "or run `agentbox config set url http://HOST:8080` (config file " + file + ")");
            }
            if (!apiKey.isSet()) {
                throw new ClientException("no API key: pass --api-key, set AGENTBOX_API_KEY (or E2B_API_KEY), "
                        + "or run `agentbox config set api-key KEY` (config file " + file + ")");
            }
            return new Settings(url.value(), apiKey.value());
        }
    }

    /** A hub to talk to: {@code url} like {@code http://127.0.0.1:8080} (no trailing slash) and an API key. */
    public record Settings(String url, String apiKey) {}

    /**
     * Resolves the URL and key.
     *
     * @param flagUrl {@code --url} or null
     * @param flagKey {@code --api-key} or null
     * @param env the process environment (tests pass their own)
     * @throws ClientException when the config file exists but cannot be read or is not a JSON object
     */
    public static Resolved resolve(String flagUrl, String flagKey, Function<String, String> env) {
        Path file = file(env);
        JsonNode fromFile = read(file);
        Value url = first(new Value(flagUrl, "--url"), fromEnv(env, "AGENTBOX_URL"), fromEnv(env, "E2B_API_URL"),
                fromFile(fromFile, "url", file));
        Value key = first(new Value(flagKey, "--api-key"), fromEnv(env, "AGENTBOX_API_KEY"), fromEnv(env, "E2B_API_KEY"),
                fromFile(fromFile, "apiKey", file));
        if (url.isSet()) {
            String u = url.value().replaceAll("/+$", "");
            if (!u.startsWith("http://") && !u.startsWith("https://")) {
                throw new ClientException("the hub URL must start with http:// or https://, got '" + url.value()
                        + "' (from " + url.source() + ")");
            }
            url = new Value(u, url.source());
        }
        return new Resolved(url, key, file);
    }

    /** The config file's path (it need not exist). */
    public static Path file(Function<String, String> env) {
        String explicit = blankToNull(env.apply("AGENTBOX_CONFIG"));
        if (explicit != null) {
            return Path.of(explicit);
        }
        String xdg = blankToNull(env.apply("XDG_CONFIG_HOME"));
        if (xdg != null) {
            return Path.of(xdg, "agentbox", "config.json");
        }
        String home = blankToNull(env.apply("HOME"));
        return Path.of(home != null ? home : System.getProperty("user.home"), ".config", "agentbox", "config.json");
    }

    /**
     * Sets {@code key} (one of {@link #FILE_KEYS}' keys) in the config file, or removes it when
     * {@code value} is null; writes atomically with mode 0600.
     */
    public static void set(Path file, String key, String value) throws IOException {
        String field = FILE_KEYS.get(key);
        if (field == null) {
            throw new ClientException("unknown config key '" + key + "'; known: " + String.join(", ", FILE_KEYS.keySet()));
        }
        JsonNode current = read(file);
        ObjectNode o = current == null ? MAPPER.createObjectNode() : (ObjectNode) current;
        if (value == null) {
            o.remove(field);
        } else {
            o.put(field, value);
        }
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".config", ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, MAPPER.writeValueAsString(o) + "\n");
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** The file's values by {@link #FILE_KEYS} key (absent keys left out); empty when there is no file. */
    public static Map<String, String> values(Path file) {
        JsonNode n = read(file);
        Map<String, String> out = new LinkedHashMap<>();
        FILE_KEYS.forEach((key, field) -> {
            if (n != null && n.path(field).isTextual()) {
                out.put(key, n.get(field).asText());
            }
        });
        return out;
    }

    private static JsonNode read(Path file) {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                throw new ClientException("config file " + file + " is larger than " + MAX_FILE_BYTES + " bytes");
            }
            JsonNode n = MAPPER.readTree(file.toFile());
            if (n == null || !n.isObject()) {
                throw new ClientException("config file " + file + " is not a JSON object");
            }
            return n;
        } catch (IOException e) {
            throw new ClientException("cannot read config file " + file + ": " + e.getMessage());
        }
    }

    private static Value fromEnv(Function<String, String> env, String name) {
        return new Value(env.apply(name), "$" + name);
    }

    private static Value fromFile(JsonNode file, String field, Path path) {
        JsonNode v = file == null ? null : file.get(field);
        return new Value(v != null && v.isTextual() ? v.asText() : null, "config file " + path);
    }

    private static Value first(Value... candidates) {
        for (Value v : candidates) {
            String s = blankToNull(v.value());
            if (s != null) {
                return new Value(s, v.source());
            }
        }
        return new Value(null, null);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
