package io.agentbox.manager.http.route;

import io.agentbox.manager.http.ApiException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.URIUtil;

/**
 * A path template as written in an OpenAPI file: literal segments and {@code {name}} segments, each
 * matching exactly one non-empty segment of the <em>raw</em> request path. Matching runs on the raw
 * path so an encoded slash ({@code %2F}, which E2B clients send inside names such as
 * {@code team%2Fsnap%3Av1}) stays inside its segment; captured values are percent-decoded after the
 * match (docs/e2b-wire.md#path-parameters).
 */
public final class PathTemplate {
    private static final Pattern PARAM = Pattern.compile("\\{[a-zA-Z][a-zA-Z0-9]*}");

    private final String text;
    private final List<String> segments;
    private final boolean[] param;
    private final int literals;

    /** @throws IllegalArgumentException when {@code text} does not start with {@code /} */
    public PathTemplate(String text) {
        if (!text.startsWith("/")) {
            throw new IllegalArgumentException("path template must start with /: " + text);
        }
        this.text = text;
        this.segments = split(text);
        this.param = new boolean[segments.size()];
        int n = 0;
        for (int i = 0; i < param.length; i++) {
            param[i] = PARAM.matcher(segments.get(i)).matches();
            n += param[i] ? 0 : 1;
        }
        this.literals = n;
    }

    /** The request path's segments: {@code /a/b/} is {@code [a, b, ""]}, so a trailing slash is a segment of its own. */
    static List<String> split(String rawPath) {
        String p = rawPath.startsWith("/") ? rawPath.substring(1) : rawPath;
        return List.of(p.split("/", -1));
    }

    /** Whether {@code rawSegments} fit this template (nothing is decoded). */
    boolean fits(List<String> rawSegments) {
        if (segments.size() != rawSegments.size()) {
            return false;
        }
        for (int i = 0; i < segments.size(); i++) {
            String t = segments.get(i);
            String s = rawSegments.get(i);
            if (param[i] ? s.isEmpty() : !t.equals(s)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The percent-decoded parameters of segments that {@link #fits fit}.
     *
     * @throws ApiException 400 when a captured segment holds a malformed percent escape
     */
    Map<String, String> params(List<String> rawSegments) {
        Map<String, String> params = new HashMap<>();
        for (int i = 0; i < segments.size(); i++) {
            String t = segments.get(i);
            if (param[i]) {
                params.put(t.substring(1, t.length() - 1), decode(rawSegments.get(i)));
            }
        }
        return params;
    }

    private static String decode(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        try {
            return URIUtil.decodePath(raw);
        } catch (IllegalArgumentException e) {
            throw ApiException.e2b(400, "malformed percent escape in path segment '" + raw + "'");
        }
    }

    /** Literal segments beat parameters: {@code /sandboxes/metrics} wins over {@code /sandboxes/{id}}. */
    int literalSegments() {
        return literals;
    }

    @Override
    public String toString() {
        return text;
    }
}
