package io.agentbox.manager.e2b;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.util.Fields;

/**
 * Query of {@code GET /v2/sandboxes} and {@code GET /sandboxes} (docs/e2b-wire.md#listing-sandboxes):
 * {@code metadata} (a form-encoded query in one parameter, each key/value percent-encoded once
 * more), {@code state} (comma-joined {@code running|paused}; absent = both), {@code limit}
 * (1..100, default 100) and {@code nextToken} (opaque offset from {@code X-Next-Token}).
 */
record ListQuery(Map<String, String> metadata, Set<String> states, int limit, int offset) {
    static final int MAX_LIMIT = 100;
    /** E2B's sandbox states; an unknown one is a 400, not an empty list. */
    static final Set<String> STATES = Set.of("running", "paused");

    static ListQuery parse(Fields query) {
        Map<String, String> metadata = new LinkedHashMap<>();
        String meta = query.getValue("metadata");
        if (meta != null && !meta.isEmpty()) {
            for (String pair : meta.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = eq < 0 ? pair : pair.substring(0, eq);
                String v = eq < 0 ? "" : pair.substring(eq + 1);
                metadata.put(decode(decode(k)), decode(decode(v)));
            }
        }
        Set<String> states = new HashSet<>();
        List<String> stateValues = query.getValues("state");
        if (stateValues != null) {
            for (String s : stateValues) {
                for (String one : s.split(",")) {
                    if (one.isBlank()) {
                        continue;
                    }
                    if (!STATES.contains(one.trim())) {
                        throw ApiException.e2b(400, "query parameter 'state': '" + InputText.quote(one.trim())
                                + "' is not a sandbox state; use running, paused or both comma-separated");
                    }
                    states.add(one.trim());
                }
            }
        }
        int limit = MAX_LIMIT;
        String l = query.getValue("limit");
        if (l != null && !l.isEmpty()) {
            try {
                limit = Integer.parseInt(l);
            } catch (NumberFormatException e) {
                throw ApiException.e2b(400, "query parameter 'limit' must be an integer");
            }
            if (limit < 1 || limit > MAX_LIMIT) {
                throw ApiException.e2b(400, "query parameter 'limit' must be between 1 and " + MAX_LIMIT);
            }
        }
        int offset = 0;
        String token = query.getValue("nextToken");
        if (token != null && !token.isEmpty()) {
            try {
                offset = Integer.parseInt(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw ApiException.e2b(400, "query parameter 'nextToken' is not a token this server issued");
            }
            if (offset < 0) {
                throw ApiException.e2b(400, "query parameter 'nextToken' is not a token this server issued");
            }
        }
        return new ListQuery(metadata, states, limit, offset);
    }

    /** Whether sandboxes in {@code state} are wanted ({@code running} or {@code paused}; no filter = both). */
    boolean wants(String state) {
        return states.isEmpty() || states.contains(state);
    }

    boolean matches(Map<String, String> sandboxMetadata) {
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (!e.getValue().equals(sandboxMetadata.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    static String token(int offset) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(Integer.toString(offset).getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiException.e2b(400, "query parameter 'metadata' is not a valid filter: each key=value pair must be percent-encoded");
        }
    }
}
