package io.agentbox.worker.image.registry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One challenge of a {@code WWW-Authenticate} header (RFC 9110 section 11.6.1: scheme, then
 * comma-separated {@code name=value} parameters, values as tokens or quoted strings). Registries
 * send {@code Bearer realm="…",service="…",scope="…"} (Docker's token authentication spec) or
 * {@code Basic realm="…"}.
 *
 * @param scheme lowercased scheme ({@code bearer}, {@code basic})
 * @param params parameters by lowercased name
 */
record AuthChallenge(String scheme, Map<String, String> params) {
    /** Header values longer than this are not parsed (a challenge is a few hundred bytes). */
    static final int MAX_HEADER_CHARS = 8192;

    String param(String name) {
        return params.get(name);
    }

    /** All challenges in {@code header}; empty for null, blank or oversized input. */
    static List<AuthChallenge> parse(String header) {
        List<AuthChallenge> out = new ArrayList<>();
        if (header == null || header.length() > MAX_HEADER_CHARS) {
            return out;
        }
        Parser p = new Parser(header);
        while (true) {
            p.skip(" \t,");
            String scheme = p.token();
            if (scheme.isEmpty()) {
                return out;
            }
            Map<String, String> params = new LinkedHashMap<>();
            while (true) {
                p.skip(" \t");
                int mark = p.pos;
                String name = p.token();
                p.skip(" \t");
                if (name.isEmpty() || !p.take('=')) {
                    p.pos = mark; // the next challenge's scheme
                    break;
                }
                p.skip(" \t");
                params.put(name.toLowerCase(Locale.ROOT), p.peek() == '"' ? p.quoted() : p.token());
                p.skip(" \t");
                if (!p.take(',')) {
                    break;
                }
            }
            out.add(new AuthChallenge(scheme.toLowerCase(Locale.ROOT), Map.copyOf(params)));
            if (p.atEnd()) {
                return out;
            }
        }
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        boolean atEnd() {
            return pos >= s.length();
        }

        char peek() {
            return atEnd() ? 0 : s.charAt(pos);
        }

        boolean take(char c) {
            if (peek() == c) {
                pos++;
                return true;
            }
            return false;
        }

        void skip(String chars) {
            while (!atEnd() && chars.indexOf(s.charAt(pos)) >= 0) {
                pos++;
            }
        }

        String token() {
            int start = pos;
            while (!atEnd() && isTokenChar(s.charAt(pos))) {
                pos++;
            }
            return s.substring(start, pos);
        }

        String quoted() {
            StringBuilder b = new StringBuilder();
            pos++; // opening quote
            while (!atEnd()) {
                char c = s.charAt(pos++);
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\' && !atEnd()) {
                    c = s.charAt(pos++);
                }
                b.append(c);
            }
            return b.toString();
        }

        private static boolean isTokenChar(char c) {
            return c > 32 && c < 127 && "()<>@,;:\\\"/[]?={} \t".indexOf(c) < 0;
        }
    }
}
