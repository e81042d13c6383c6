package io.agentbox.worker.image.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Answers registry challenges. Bearer (Docker's token authentication spec, as Docker Hub and
 * GHCR use it): {@code GET realm?service=S&scope=repository:REPO:pull}, with Basic credentials
 * when some are configured, answer {@code {"token"|"access_token": "...", "expires_in": N}}
 * (N defaults to 60 s). Basic: the configured username and password. The challenge last seen per
 * registry is remembered so later requests carry credentials from the start.
 */
final class RegistryAuth {
    static final long MAX_TOKEN_RESPONSE_BYTES = 1 << 20;
    static final Duration DEFAULT_TOKEN_LIFETIME = Duration.ofSeconds(60);

    /** An Authorization header value, and whether it was obtained just now (a refusal is then final). */
    record Authz(String header, boolean fresh, TokenCache.Key tokenKey, String token) {}

    private final RegistryConfig config;
    private final HttpTransport transport;
    private final ObjectMapper json;
    private final TokenCache tokens = new TokenCache();
    private final ConcurrentMap<String, AuthChallenge> challenges = new ConcurrentHashMap<>();

    RegistryAuth(RegistryConfig config, HttpTransport transport, ObjectMapper json) {
        this.config = config;
        this.transport = transport;
        this.json = json;
    }

    /**
     * What to send to {@code registry} for {@code repo} before any challenge: null until the
     * registry has challenged us once; a cached token, or a new one when it expired.
     */
    Authz initial(String registry, String repo, String what) throws IOException {
        AuthChallenge c = challenges.get(RegistryConfig.key(registry));
        return c == null ? null : answer(registry, repo, c, false, what);
    }

    /**
     * Answers a 401. {@code sent} is what the refused request carried (null for none).
     *
     * @throws RegistryUnauthorizedException when no credentials can be had or they were refused
     */
    Authz onUnauthorized(String registry, String repo, String wwwAuthenticate, Authz sent, String what) throws IOException {
        List<AuthChallenge> all = AuthChallenge.parse(wwwAuthenticate);
        AuthChallenge c = all.stream().filter(a -> a.scheme().equals("bearer")).findFirst()
                .or(() -> all.stream().filter(a -> a.scheme().equals("basic")).findFirst())
                .orElseThrow(() -> new RegistryUnauthorizedException(what + ": unauthorized at " + registry
                        + " (no Bearer or Basic challenge in WWW-Authenticate: "
                        + (wwwAuthenticate == null ? "header missing" : "'" + wwwAuthenticate + "'") + ")"));
        challenges.put(RegistryConfig.key(registry), c);
        if (sent != null && sent.tokenKey() != null) {
            tokens.invalidate(sent.tokenKey(), sent.token());
        }
        if (c.scheme().equals("basic") && sent != null && sent.header().startsWith("Basic ")) {
            throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry + " (the registry refused the password of user '"
                    + config.credentialsFor(registry).username() + "')");
        }
        return answer(registry, repo, c, true, what);
    }

    private Authz answer(String registry, String repo, AuthChallenge c, boolean forceNew, String what) throws IOException {
        RegistryConfig.Credentials creds = config.credentialsFor(registry);
        if (c.scheme().equals("basic")) {
            if (creds == null) {
                throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry
                        + " (the registry asks for a username and password and none are configured for it)");
            }
            return new Authz(basic(creds), forceNew, null, null);
        }
        String realm = c.param("realm");
        if (realm == null || realm.isBlank()) {
            throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry + " (Bearer challenge without a realm)");
        }
        TokenCache.Key key = new TokenCache.Key(realm, c.param("service"), "repository:" + repo + ":pull");
        synchronized (tokens.lock(key)) {
            String token = forceNew ? null : tokens.get(key);
            boolean fresh = false;
            if (token == null) {
                token = fetchToken(registry, key, creds, what);
                fresh = true;
            }
            return new Authz("Bearer " + token, fresh, key, token);
        }
    }

    private String fetchToken(String registry, TokenCache.Key key, RegistryConfig.Credentials creds, String what) throws IOException {
        URI uri;
        try {
            StringBuilder u = new StringBuilder(key.realm()).append(key.realm().contains("?") ? '&' : '?');
            if (key.service() != null) {
                u.append("service=").append(enc(key.service())).append('&');
            }
            u.append("scope=").append(enc(key.scope()));
            uri = URI.create(u.toString());
        } catch (IllegalArgumentException e) {
            throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry + " (token realm '" + key.realm()
                    + "' is not a URL)");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(scheme.equals("http") && config.isInsecure(registry))) {
            throw new RegistryUnauthorizedException(what + ": refusing the token service " + key.realm() + " of " + registry
                    + ": only https is used for tokens unless the registry is configured insecure");
        }
        Map<String, String> headers = creds == null ? Map.of() : Map.of("Authorization", basic(creds));
        String who = creds == null ? "an anonymous token" : "the credentials of user '" + creds.username() + "'";
        HttpTransport.Reply reply;
        try {
            reply = transport.send("GET", uri, headers, false);
        } catch (HttpTransport.ConnectFailure e) {
            throw new RegistryUnreachableException(what + ": token service " + key.realm() + " of " + registry + " unreachable: "
                    + e.getMessage(), e);
        }
        try (reply) {
            int status = reply.status();
            if (status == 401 || status == 403) {
                throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry + " (token service " + key.realm()
                        + " refused " + who + ", " + status + ")");
            }
            if (status != 200) {
                throw new RegistryException(what + ": token service " + key.realm() + " of " + registry + " answered " + status,
                        status, null);
            }
            JsonNode body;
            try {
                body = json.readTree(reply.readAll(MAX_TOKEN_RESPONSE_BYTES));
            } catch (HttpTransport.BodyTooLarge e) {
                throw new RegistryException(what + ": token service " + key.realm() + " answered more than "
                        + MAX_TOKEN_RESPONSE_BYTES + " bytes");
            } catch (IOException e) {
                throw new RegistryException(what + ": token service " + key.realm() + " answered unreadable JSON: " + e.getMessage(), e);
            }
            String token = text(body, "token");
            if (token == null) {
                token = text(body, "access_token");
            }
            if (token == null) {
                throw new RegistryException(what + ": token service " + key.realm() + " answered no token");
            }
            long expiresIn = body.path("expires_in").asLong(0);
            tokens.put(key, token, expiresIn > 0 ? Duration.ofSeconds(expiresIn) : DEFAULT_TOKEN_LIFETIME);
            return token;
        }
    }

    private static String text(JsonNode body, String field) {
        JsonNode n = body.get(field);
        return n != null && n.isTextual() && !n.asText().isEmpty() ? n.asText() : null;
    }

    private static String basic(RegistryConfig.Credentials c) {
        return "Basic " + Base64.getEncoder().encodeToString((c.username() + ":" + c.password()).getBytes(StandardCharsets.UTF_8));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
