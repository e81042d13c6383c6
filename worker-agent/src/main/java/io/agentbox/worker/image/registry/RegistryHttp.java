package io.agentbox.worker.image.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.protocol.image.ImageReference;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import javax.net.ssl.SSLException;

/**
 * GETs on a registry's API (distribution-spec {@code /v2/<name>/manifests|blobs/<reference>})
 * with what every request needs: authorization (answering 401 challenges once with fresh
 * credentials), redirects followed by hand (Authorization only ever goes to the registry's own
 * origin), and waits on 429/503 that honour {@code Retry-After}. Error answers become
 * {@link RegistryException}s whose message starts with the caller's {@code what}.
 */
final class RegistryHttp {
    static final int MAX_REDIRECTS = 5;
    static final long MAX_ERROR_BODY_BYTES = 64 * 1024;

    private final RegistryConfig config;
    private final HttpTransport transport;
    private final RegistryAuth auth;
    private final ObjectMapper json;

    RegistryHttp(RegistryConfig config, HttpTransport transport, RegistryAuth auth, ObjectMapper json) {
        this.config = config;
        this.transport = transport;
        this.auth = auth;
        this.json = json;
    }

    /** {@code http(s)://<api host>/v2/<repository>/<suffix>}, https unless the registry is configured insecure. */
    URI uri(ImageReference ref, String suffix) {
        String scheme = config.isInsecure(ref.registry()) ? "http" : "https";
        return URI.create(scheme + "://" + ref.apiHost() + "/v2/" + ref.repository() + "/" + suffix);
    }

    /**
     * GETs {@code suffix} of {@code ref}'s repository.
     *
     * @param headers extra request headers (Accept, Range)
     * @param streaming true for blob bodies (no whole-exchange timeout)
     * @return a 2xx reply, to be closed by the caller
     * @throws ImageNotFoundException on 404, RegistryUnauthorizedException on 401/403,
     *     RegistryUnreachableException when no answer came, RegistryException otherwise
     */
    HttpTransport.Reply get(ImageReference ref, String what, String suffix, Map<String, String> headers, boolean streaming)
            throws IOException {
        URI start = uri(ref, suffix);
        String registry = ref.registry();
        RegistryAuth.Authz authz = auth.initial(registry, ref.repository(), what);
        boolean fresh = authz != null && authz.fresh();
        int attempt = 0;
        while (true) {
            attempt++;
            URI at = start;
            HttpTransport.Reply reply;
            int redirects = 0;
            while (true) {
                boolean sameOrigin = sameOrigin(at, start);
                Map<String, String> h = new LinkedHashMap<>(headers);
                if (authz != null && sameOrigin) {
                    h.put("Authorization", authz.header());
                }
                reply = send(at, h, streaming, registry, what, at != start);
                String location = reply.header("Location");
                if (!isRedirect(reply.status()) || location == null) {
                    break;
                }
                reply.close();
                if (++redirects > MAX_REDIRECTS) {
                    throw new RegistryException(what + ": more than " + MAX_REDIRECTS + " redirects from " + registry);
                }
                URI next = resolve(at, location, what);
                if (at.getScheme().equals("https") && !next.getScheme().equals("https")
                        && !config.isInsecure(next.getRawAuthority())) {
                    throw new RegistryException(what + ": registry " + registry + " redirected from https to plain " + next
                            + "; refused");
                }
                at = next;
            }
            int status = reply.status();
            if (status == 401 && sameOrigin(at, start)) {
                String challenge = reply.header("WWW-Authenticate");
                if (fresh) {
                    reply.close();
                    RegistryConfig.Credentials creds = config.credentialsFor(registry);
                    String detail = authz.header().startsWith("Basic ") && creds != null
                            ? "the registry refused the password of user '" + creds.username() + "'"
                            : "the registry refused the token its token service just issued"
                                    + (creds == null ? " (no credentials are configured for it)" : " to user '" + creds.username() + "'");
                    throw new RegistryUnauthorizedException(what + ": unauthorized at " + registry + " (" + detail + ")");
                }
                reply.close();
                authz = auth.onUnauthorized(registry, ref.repository(), challenge, authz, what);
                fresh = true;
                attempt--; // answering a challenge is not a retry
                continue;
            }
            if (status == 429 || status == 503) {
                Duration retryAfter = RetryWait.parseRetryAfter(reply.header("Retry-After"), Instant.now());
                reply.close();
                Duration cap = config.limits().maxBackoff();
                if (attempt >= config.limits().maxAttempts()) {
                    throw new RegistryException(what + ": registry " + registry + " still answered " + status + " after "
                            + attempt + " attempts", status, null);
                }
                if (retryAfter != null && retryAfter.compareTo(cap) > 0) {
                    throw new RegistryException(what + ": registry " + registry + " answered " + status + " and asks to retry after "
                            + retryAfter.toSeconds() + " s, longer than the limit of " + cap.toSeconds() + " s", status, null);
                }
                sleep(RetryWait.delay(attempt, retryAfter, cap));
                continue;
            }
            if (status >= 200 && status < 300) {
                return reply;
            }
            throw errorFor(reply, what, registry);
        }
    }

    private HttpTransport.Reply send(URI uri, Map<String, String> headers, boolean streaming, String registry, String what,
                                     boolean redirected) throws IOException {
        try {
            return transport.send("GET", uri, headers, streaming);
        } catch (HttpTransport.ConnectFailure e) {
            String where = redirected ? "registry " + registry + " (redirected to " + uri.getRawAuthority() + ")"
                    : "registry " + registry;
            String hint = "";
            if (e.getCause() instanceof SSLException && uri.getScheme().equals("https")) {
                hint = " (TLS failed on " + uri.getScheme() + "://" + uri.getRawAuthority()
                        + "; if this registry speaks plain HTTP, configure it as an insecure registry)";
            }
            throw new RegistryUnreachableException(what + ": " + where + " unreachable: " + e.getMessage() + hint, e);
        }
    }

    private RegistryException errorFor(HttpTransport.Reply reply, String what, String registry) {
        int status = reply.status();
        try (reply) {
            String code = errorCode(reply);
            return switch (status) {
                case 404 -> new ImageNotFoundException(what + ": not found (registry answered 404" + code + ")");
                case 401 -> new RegistryUnauthorizedException(what + ": unauthorized at " + reply.uri().getRawAuthority() + " (401"
                        + code + ")");
                case 403 -> new RegistryUnauthorizedException(what + ": access denied at " + registry + " (403" + code + ")");
                default -> new RegistryException(what + ": registry " + registry + " answered " + status + code, status, null);
            };
        }
    }

    /** " MANIFEST_UNKNOWN" (the first error code of a distribution-spec error body) or "". */
    private String errorCode(HttpTransport.Reply reply) {
        try {
            JsonNode errors = json.readTree(reply.readAll(MAX_ERROR_BODY_BYTES)).path("errors");
            if (errors.isArray() && !errors.isEmpty()) {
                String code = errors.get(0).path("code").asText("");
                return code.isEmpty() ? "" : " " + code;
            }
        } catch (IOException | RuntimeException e) {
            // not a distribution-spec body: the status alone has to do
        }
        return "";
    }

    private static boolean isRedirect(int status) {
        return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    }

    private static URI resolve(URI base, String location, String what) throws RegistryException {
        try {
            URI next = base.resolve(location.trim());
            String s = next.getScheme() == null ? "" : next.getScheme().toLowerCase(Locale.ROOT);
            if (!(s.equals("http") || s.equals("https")) || next.getRawAuthority() == null) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
            return next;
        } catch (IllegalArgumentException e) {
            throw new RegistryException(what + ": unusable redirect to '" + location + "'");
        }
    }

    static boolean sameOrigin(URI a, URI b) {
        return a.getScheme().equalsIgnoreCase(b.getScheme())
                && Objects.equals(a.getHost() == null ? null : a.getHost().toLowerCase(Locale.ROOT),
                        b.getHost() == null ? null : b.getHost().toLowerCase(Locale.ROOT))
                && port(a) == port(b);
    }

    private static int port(URI u) {
        return u.getPort() >= 0 ? u.getPort() : u.getScheme().equalsIgnoreCase("https") ? 443 : 80;
    }

    static void sleep(Duration d) throws InterruptedIOException {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting to retry");
        }
    }
}
