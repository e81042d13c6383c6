package io.agentbox.worker.image.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty server on 127.0.0.1 in front of a {@link LocalRegistry}, passing GET/HEAD through and
 * injecting what real registries do to clients, switched per test: Bearer tokens from its own
 * {@code /token} (Basic-checked, with expiry), Basic auth, 307 redirects of blob GETs to a "CDN"
 * listener on 127.0.0.2, 429 with {@code Retry-After}, a blob cut mid-stream, a corrupted byte, a
 * resume answered from the wrong offset, a rewritten manifest Content-Type. It records every
 * request it sees.
 */
public final class FaultyRegistryFront implements AutoCloseable {
    /** Host for the redirect target: another loopback address, so "another host" is real. */
    public static final String CDN_HOST = "127.0.0.2";
    public static final String SERVICE = "faulty-front";

    /**
     * A request as received.
     *
     * @param listener {@code front} or {@code cdn}
     * @param range the Range header or null
     * @param authorization whether an Authorization header came
     */
    public record Seen(String listener, String method, String path, String range, boolean authorization) {}

    private record Issued(String scope, long expiresAtNanos) {}

    private static final Pattern V2_PATH = Pattern.compile("/v2/(.+)/(manifests|blobs)/([^/]+)");

    private final LocalRegistry backend;
    private final HttpClient toBackend = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Server server;
    private final ServerConnector front;
    private final ServerConnector cdn;
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final AtomicInteger tokenRequests = new AtomicInteger();
    private final Map<String, Issued> issued = new ConcurrentHashMap<>();

    // switches (volatile: flipped by the test thread, read by Jetty's)
    private volatile String bearerUser;
    private volatile String bearerPassword;
    private volatile boolean bearer;
    private volatile Duration advertisedLifetime = Duration.ofSeconds(60);
    private volatile Duration enforcedLifetime;
    private volatile String tokenField = "token";
    private volatile String basicUser;
    private volatile String basicPassword;
    private volatile boolean redirectBlobs;
    private volatile String rateLimitPath;
    private volatile String rateLimitRetryAfter;
    private final AtomicInteger rateLimitLeft = new AtomicInteger();
    private volatile String cutDigest;
    private volatile double cutFraction;
    private volatile String corruptDigest;
    private volatile String badResumeDigest;
    private volatile String manifestContentType;
    private final Map<String, String> substitutes = new ConcurrentHashMap<>();

    private FaultyRegistryFront(LocalRegistry backend) throws Exception {
        this.backend = backend;
        QueuedThreadPool threads = new QueuedThreadPool(32, 4);
        threads.setName("faulty-front");
        server = new Server(threads);
        front = new ServerConnector(server);
        front.setHost("127.0.0.1");
        front.setPort(0);
        cdn = new ServerConnector(server);
        cdn.setHost(CDN_HOST);
        cdn.setPort(0);
        server.addConnector(front);
        server.addConnector(cdn);
        server.setHandler(new Dispatch());
        server.start();
    }

    /** Starts a front for {@code backend} with every fault off. */
    public static FaultyRegistryFront start(LocalRegistry backend) throws Exception {
        return new FaultyRegistryFront(backend);
    }

    /** {@code 127.0.0.1:<port>}, the registry as written in image references. */
    public String hostPort() {
        return "127.0.0.1:" + front.getLocalPort();
    }

    public String cdnHostPort() {
        return CDN_HOST + ":" + cdn.getLocalPort();
    }

    /**
     * Registry requests need {@code Authorization: Bearer <token>} from {@code /token}, which
     * wants Basic {@code user}/{@code password} (null user: anonymous tokens) and answers
     * {@code expires_in} = {@code lifetime}.
     */
    public void requireBearer(String user, String password, Duration lifetime) {
        bearerUser = user;
        bearerPassword = password;
        advertisedLifetime = lifetime;
        bearer = true;
    }

    /** Tokens stop working after {@code lifetime} whatever {@code expires_in} said (null: as advertised). */
    public void enforceTokenLifetime(Duration lifetime) {
        enforcedLifetime = lifetime;
    }

    /** The token answer's field: {@code token} (default) or {@code access_token}. */
    public void tokenField(String field) {
        tokenField = field;
    }

    /** Registry requests need Basic {@code user}/{@code password}. */
    public void requireBasic(String user, String password) {
        basicUser = user;
        basicPassword = password;
    }

    /** Blob GETs are answered 307 to the CDN listener on {@link #CDN_HOST}. */
    public void redirectBlobs(boolean on) {
        redirectBlobs = on;
    }

    /** The next {@code times} GETs whose path contains {@code pathPart} get 429 with this {@code Retry-After} (null: none). */
    public void rateLimit(String pathPart, String retryAfter, int times) {
        rateLimitPath = pathPart;
        rateLimitRetryAfter = retryAfter;
        rateLimitLeft.set(times);
    }

    /** The next GET of blob {@code digest} without Range sends {@code fraction} of the bytes, then the connection dies. */
    public void cutBlobOnce(String digest, double fraction) {
        cutFraction = fraction;
        cutDigest = digest;
    }

    /** Every GET of blob {@code digest} has its middle byte flipped. */
    public void corruptBlob(String digest) {
        corruptDigest = digest;
    }

    /** The next ranged GET of blob {@code digest} is answered 206 with the whole blob and {@code Content-Range: bytes 0-…}. */
    public void badResumeOnce(String digest) {
        badResumeDigest = digest;
    }

    /** Manifest answers carry this Content-Type instead of the registry's (null: the registry's). */
    public void manifestContentType(String contentType) {
        manifestContentType = contentType;
    }

    /** GETs of manifest {@code requested} are answered with manifest {@code served} (a lying registry). */
    public void substituteManifest(String requested, String served) {
        substitutes.put(requested, served);
    }

    public List<Seen> seen() {
        return List.copyOf(seen);
    }

    public int tokenRequests() {
        return tokenRequests.get();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    private final class Dispatch extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            boolean atCdn = Request.getLocalPort(request) == cdn.getLocalPort();
            String path = request.getHttpURI().getPath();
            String range = request.getHeaders().get(HttpHeader.RANGE);
            String authz = request.getHeaders().get(HttpHeader.AUTHORIZATION);
            seen.add(new Seen(atCdn ? "cdn" : "front", request.getMethod(), path, range, authz != null));
            if (atCdn) {
                cdn(request, response, callback, path, range);
            } else if (path.equals("/token")) {
                token(request, response, callback, authz);
            } else {
                registry(request, response, callback, path, range, authz);
            }
            return true;
        }
    }

    private void token(Request request, Response response, Callback callback, String authz) {
        tokenRequests.incrementAndGet();
        if (bearerUser != null && !basic(bearerUser, bearerPassword).equals(authz)) {
            text(response, callback, 401, "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"bad credentials\"}]}");
            return;
        }
        String scope = Request.extractQueryParameters(request).getValue("scope");
        String token = UUID.randomUUID().toString();
        Duration enforced = enforcedLifetime != null ? enforcedLifetime : advertisedLifetime;
        issued.put(token, new Issued(scope, System.nanoTime() + enforced.toNanos()));
        text(response, callback, 200, "{\"" + tokenField + "\":\"" + token + "\",\"expires_in\":"
                + advertisedLifetime.toSeconds() + "}");
    }

    private void registry(Request request, Response response, Callback callback, String path, String range, String authz)
            throws Exception {
        Matcher m = V2_PATH.matcher(path);
        String repo = m.matches() ? m.group(1) : null;
        if (bearer && repo != null && !validBearer(authz, repo)) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer realm=\"http://" + hostPort() + "/token\",service=\""
                    + SERVICE + "\",scope=\"repository:" + repo + ":pull\"");
            text(response, callback, 401, "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"authentication required\"}]}");
            return;
        }
        if (basicUser != null && !basic(basicUser, basicPassword).equals(authz)) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Basic realm=\"faulty-front\"");
            text(response, callback, 401, "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"authentication required\"}]}");
            return;
        }
        String limited = rateLimitPath;
        if (limited != null && path.contains(limited) && rateLimitLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            if (rateLimitRetryAfter != null) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, rateLimitRetryAfter);
            }
            text(response, callback, 429, "{\"errors\":[{\"code\":\"TOOMANYREQUESTS\",\"message\":\"slow down\"}]}");
            return;
        }
        boolean blob = m.matches() && m.group(2).equals("blobs");
        String digest = m.matches() ? m.group(3) : null;
        if (blob && redirectBlobs) {
            response.setStatus(307);
            response.getHeaders().put(HttpHeader.LOCATION, "http://" + cdnHostPort() + "/cdn/" + repo + "/" + digest + "?sig=x");
            response.write(true, ByteBuffer.allocate(0), callback);
            return;
        }
        String served = path;
        if (!blob && m.matches() && substitutes.containsKey(digest)) {
            served = "/v2/" + repo + "/manifests/" + substitutes.get(digest);
        }
        proxy(request, response, callback, served, range, blob ? digest : null, !blob && m.matches());
    }

    private void cdn(Request request, Response response, Callback callback, String path, String range) throws Exception {
        if (!path.startsWith("/cdn/")) {
            text(response, callback, 404, "");
            return;
        }
        String rest = path.substring("/cdn/".length());
        int slash = rest.lastIndexOf('/');
        proxy(request, response, callback, "/v2/" + rest.substring(0, slash) + "/blobs/" + rest.substring(slash + 1), range,
                null, false);
    }

    private void proxy(Request request, Response response, Callback callback, String path, String range, String blobDigest,
                       boolean manifest) throws Exception {
        boolean badResume = blobDigest != null && range != null && blobDigest.equals(badResumeDigest);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(backend.baseUri() + path))
                .method(request.getMethod(), HttpRequest.BodyPublishers.noBody());
        String accept = request.getHeaders().get(HttpHeader.ACCEPT);
        if (accept != null) {
            b.header("Accept", accept);
        }
        if (range != null && !badResume) {
            b.header("Range", range);
        }
        HttpResponse<byte[]> r = toBackend.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        byte[] body = r.body();
        int status = r.statusCode();
        for (String h : List.of("Content-Type", "Docker-Content-Digest", "Content-Range", "Accept-Ranges", "Etag")) {
            r.headers().firstValue(h).ifPresent(v -> response.getHeaders().put(h, v));
        }
        if (manifest && manifestContentType != null && status == 200) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, manifestContentType);
        }
        if (badResume && status == 200) {
            badResumeDigest = null;
            status = 206;
            response.getHeaders().put(HttpHeader.CONTENT_RANGE, "bytes 0-" + (body.length - 1) + "/" + body.length);
        }
        if (blobDigest != null && blobDigest.equals(corruptDigest) && body.length > 0) {
            body = body.clone();
            body[body.length / 2] ^= 0x01;
        }
        response.setStatus(status);
        if (request.getMethod().equals("HEAD")) {
            r.headers().firstValue("Content-Length").ifPresent(v -> response.getHeaders().put(HttpHeader.CONTENT_LENGTH, v));
            response.write(true, ByteBuffer.allocate(0), callback);
            return;
        }
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        if (blobDigest != null && range == null && blobDigest.equals(cutDigest) && status == 200) {
            cutDigest = null;
            int part = (int) (body.length * cutFraction);
            try (Blocker.Callback sent = Blocker.callback()) {
                response.write(false, ByteBuffer.wrap(body, 0, part), sent);
                sent.block();
            }
            request.getConnectionMetaData().getConnection().getEndPoint().close();
            callback.failed(new IOException("cut on purpose after " + part + " of " + body.length + " bytes"));
            return;
        }
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    private boolean validBearer(String authz, String repo) {
        if (authz == null || !authz.startsWith("Bearer ")) {
            return false;
        }
        Issued t = issued.get(authz.substring("Bearer ".length()));
        return t != null && System.nanoTime() - t.expiresAtNanos < 0 && ("repository:" + repo + ":pull").equals(t.scope);
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static void text(Response response, Callback callback, int status, String json) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(json.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
