package io.agentbox.manager.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Serves the browser console's static files under {@value #PREFIX} on the hub's public port
 * (docs/console.md). The files are the jar's: the console's own ES modules and CSS from the
 * classpath folder {@code console/}, and xterm.js with its fit addon from their WebJars under
 * {@code /console/vendor/}. The pages call the native API {@code /v1} with the signed-in key;
 * nothing here reads a key or a store.
 *
 * <p><b>Paths.</b> {@code /console} redirects to {@code /console/}, which is {@code index.html}.
 * Every other path must be segments of {@code [A-Za-z0-9_-][A-Za-z0-9._-]*} (no leading dot, so
 * no {@code ..}, no hidden file, no percent escape) ending in a file name whose extension has a
 * content type below; anything else, a folder included, is 404 (so there is no listing and no
 * way out of the folder). {@code GET} and {@code HEAD} only (405 with {@code Allow} otherwise).
 *
 * <p><b>Headers.</b> Every answer carries a Content-Security-Policy that allows scripts, styles and
 * connections to this origin only ({@value #CSP}), {@code nosniff}, {@code no-referrer} and no
 * framing. Files are revalidated on each load ({@code Cache-Control: no-cache}) against a strong
 * ETag of their bytes (304 on {@code If-None-Match}), so an upgraded hub is seen at once.
 *
 * <p><b>Threading.</b> Files are read from the classpath on first use and kept (the set is fixed
 * by the jar, a few hundred KiB); safe for concurrent requests.
 */
public final class ConsoleHandler {
    /** The console's path on the public port. */
    public static final String PREFIX = "/console";
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    static final String CACHE_CONTROL = "no-cache";

    private static final Pattern SAFE_PATH = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*");
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "svg", "image/svg+xml",
            "png", "image/png",
            "ico", "image/x-icon");
    /** Third-party browser files: public name under {@code vendor/} → WebJar and file inside it. */
    private static final Map<String, String[]> VENDOR = Map.of(
            "xterm.js", new String[] {"xterm", "lib/xterm.js"},
            "xterm.css", new String[] {"xterm", "css/xterm.css"},
            "xterm-addon-fit.js", new String[] {"xterm-addon-fit", "lib/xterm-addon-fit.js"});

    private final ClassLoader loader = ConsoleHandler.class.getClassLoader();
    private final Map<String, StaticFile> files = new ConcurrentHashMap<>();

    /** A file ready to serve: its bytes, content type and ETag. */
    record StaticFile(byte[] bytes, String type, String etag) {}

    /** True for {@code /console} and every path under {@code /console/}. */
    public static boolean isConsoleRequest(Request request) {
        String path = request.getHttpURI().getPath();
        return path != null && (path.equals(PREFIX) || path.startsWith(PREFIX + "/"));
    }

    /** Answers a request for which {@link #isConsoleRequest} is true; completes {@code callback}. */
    public void handle(Request request, Response response, Callback callback) {
        securityHeaders(response);
        String method = request.getMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
            text(response, callback, 405, "method not allowed: the console serves GET and HEAD");
            return;
        }
        String path = request.getHttpURI().getPath();
        if (path.equals(PREFIX)) {
            response.getHeaders().put(HttpHeader.LOCATION, PREFIX + "/");
            text(response, callback, 301, "moved to " + PREFIX + "/");
            return;
        }
        String name = path.substring(PREFIX.length() + 1);
        StaticFile file = find(name.isEmpty() ? "index.html" : name);
        if (file == null) {
            text(response, callback, 404, "not found");
            return;
        }
        response.getHeaders().put(HttpHeader.ETAG, file.etag());
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, CACHE_CONTROL);
        String ifNoneMatch = request.getHeaders().get(HttpHeader.IF_NONE_MATCH);
        if (ifNoneMatch != null && (ifNoneMatch.contains(file.etag()) || ifNoneMatch.trim().equals("*"))) {
            response.setStatus(304);
            response.write(true, null, callback);
            return;
        }
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, file.type());
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, file.bytes().length);
        response.write(true, method.equals("HEAD") ? null : ByteBuffer.wrap(file.bytes()), callback);
    }

    /** The file for a name relative to {@code /console/}, or null when there is none or the name is refused. */
    StaticFile find(String name) {
        if (!SAFE_PATH.matcher(name).matches()) {
            return null;
        }
        String type = TYPES.get(name.substring(name.lastIndexOf('.') + 1));
        if (type == null || name.lastIndexOf('.') <= name.lastIndexOf('/') + 1) {
            return null; // folders and names without a served extension
        }
        StaticFile cached = files.get(name);
        if (cached != null) {
            return cached;
        }
        String resource = resourceOf(name);
        if (resource == null) {
            return null;
        }
        byte[] bytes = read(resource);
        if (bytes == null) {
            return null;
        }
        StaticFile file = new StaticFile(bytes, type, etag(bytes));
        files.put(name, file);
        return file;
    }

    /** The classpath resource behind a public name, or null. */
    private String resourceOf(String name) {
        if (!name.startsWith("vendor/")) {
            return "console/" + name;
        }
        String[] vendor = VENDOR.get(name.substring("vendor/".length()));
        if (vendor == null) {
            return null;
        }
        String version = webJarVersion(vendor[0]);
        return version == null ? null : "META-INF/resources/webjars/" + vendor[0] + "/" + version + "/" + vendor[1];
    }

    /** The version of the WebJar on the classpath (from its Maven properties), so a pom upgrade needs no code change. */
    private String webJarVersion(String artifact) {
        byte[] props = read("META-INF/maven/org.webjars.npm/" + artifact + "/pom.properties");
        if (props == null) {
            return null;
        }
        for (String line : new String(props, StandardCharsets.ISO_8859_1).split("\\R")) {
            if (line.startsWith("version=")) {
                String version = line.substring("version=".length()).trim();
                return SAFE_PATH.matcher(version).matches() ? version : null;
            }
        }
        return null;
    }

    private byte[] read(String resource) {
        try (InputStream in = loader.getResourceAsStream(resource)) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read console file " + resource, e);
        }
    }

    private static String etag(byte[] bytes) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
            return "\"" + java.util.HexFormat.of().formatHex(digest, 0, 12) + "\"";
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private static void securityHeaders(Response response) {
        response.getHeaders().put("Content-Security-Policy", CSP);
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        response.getHeaders().put("Referrer-Policy", "no-referrer");
        response.getHeaders().put("X-Frame-Options", "DENY");
    }

    private static void text(Response response, Callback callback, int status, String message) {
        byte[] bytes = (message + "\n").getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }
}
