package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One management API route: a method, a path template whose {@code {name}} segments match one
 * non-empty path segment, and what answers it.
 *
 * @param method        HTTP method
 * @param path          template, e.g. {@code /internal/templates/{name}} (as written in the OpenAPI file)
 * @param authenticated whether the manager token is required
 * @param endpoint      the handler
 */
record Route(String method, String path, boolean authenticated, Endpoint endpoint) {
    private static final Pattern PARAM = Pattern.compile("\\{[a-zA-Z]+}");

    /** Answers a matched request. */
    @FunctionalInterface
    interface Endpoint {
        Reply handle(Call call) throws Exception;
    }

    /**
     * A response: JSON ({@code json} set) or other bytes ({@code contentType} + {@code bytes}).
     *
     * @param status HTTP status
     */
    record Reply(int status, JsonNode json, String contentType, byte[] bytes) {
        static Reply json(int status, JsonNode body) {
            return new Reply(status, body, null, null);
        }

        static Reply noContent() {
            return new Reply(204, null, null, null);
        }
    }

    List<String> segments() {
        return List.of(path.substring(1).split("/"));
    }

    /** Path parameters when {@code requestSegments} fit this template, else null. */
    Map<String, String> match(List<String> requestSegments) {
        List<String> mine = segments();
        if (mine.size() != requestSegments.size()) {
            return null;
        }
        Map<String, String> params = new java.util.HashMap<>();
        for (int i = 0; i < mine.size(); i++) {
            String t = mine.get(i);
            String s = requestSegments.get(i);
            if (PARAM.matcher(t).matches()) {
                if (s.isEmpty()) {
                    return null;
                }
                params.put(t.substring(1, t.length() - 1), s);
            } else if (!t.equals(s)) {
                return null;
            }
        }
        return params;
    }

    /** Literal segments beat parameters: {@code /internal/clusters/status} wins over {@code /internal/clusters/{id}}. */
    int literalSegments() {
        return (int) segments().stream().filter(s -> !PARAM.matcher(s).matches()).count();
    }
}
