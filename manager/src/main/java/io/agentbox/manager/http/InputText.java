package io.agentbox.manager.http;

import io.agentbox.worker.runtime.EnvVars;
import io.grpc.StatusRuntimeException;
import java.util.Map;

/**
 * What text the APIs accept before storing or passing it on. Two rules:
 *
 * <ul>
 *   <li><b>label</b> (names, descriptions, metadata keys and values): no
 *       control character (U+0000–U+001F, U+007F–U+009F: NUL, tab and newline included), no
 *       bidirectional formatting character (U+061C, U+200E, U+200F, U+202A–U+202E,
 *       U+2066–U+2069: they make a shown name read differently from what it is) and no unpaired
 *       surrogate (not encodable as UTF-8).</li>
 *   <li><b>value</b> (env values, settings, paths, command lines): no NUL (C strings, and so
 *       {@code execve} and file names, end there) and no unpaired surrogate; newlines and tabs
 *       are fine.</li>
 * </ul>
 * Environment variables follow {@link #env}. Errors name the field and the offending character
 * as {@code U+XXXX} with its index.
 */
public final class InputText {
    private InputText() {}

    /**
     * Why {@code s} breaks the label rule ({@code valueRule} false) or the value rule (true),
     * e.g. {@code "holds U+202E (a bidirectional control) at index 3"}; null when it is fine.
     */
    public static String problem(String s, boolean valueRule) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++; // a pair: no control or bidi character lies outside the BMP
                    continue;
                }
                return describe(c, i, "an unpaired surrogate");
            }
            if (Character.isLowSurrogate(c)) {
                return describe(c, i, "an unpaired surrogate");
            }
            if (c == 0) {
                return describe(c, i, "NUL");
            }
            if (!valueRule && Character.isISOControl(c)) {
                return describe(c, i, "a control character");
            }
            if (!valueRule && isBidiControl(c)) {
                return describe(c, i, "a bidirectional control");
            }
        }
        return null;
    }

    /**
     * {@code value} when it follows the label rule.
     *
     * @throws ApiException 400 (E2B shape) naming {@code field}
     */
    public static String label(String field, String value) {
        return check(field, value, false);
    }

    /**
     * {@code value} when it follows the value rule.
     *
     * @throws ApiException 400 (E2B shape) naming {@code field}
     */
    public static String value(String field, String value) {
        return check(field, value, true);
    }

    /**
     * {@code env} when every name is a POSIX shell name and no value holds NUL or an unpaired
     * surrogate (the worker's {@link EnvVars} rule, checked here so nothing is stored or started).
     *
     * @throws ApiException 400 (E2B shape) naming {@code field} and the variable
     */
    public static Map<String, String> env(String field, Map<String, String> env) {
        try {
            EnvVars.requireValid(env);
        } catch (StatusRuntimeException e) {
            throw ApiException.e2b(400, field + ": " + quote(String.valueOf(e.getStatus().getDescription())));
        }
        env.forEach((k, v) -> value(field + "." + quote(k), v));
        return env;
    }

    /** {@code s} with every character the label rule refuses written as {@code \\uXXXX}, safe to echo in a message. */
    public static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            if (paired) {
                out.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c) || Character.isISOControl(c) || isBidiControl(c)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String check(String field, String value, boolean valueRule) {
        String problem = value == null ? null : problem(value, valueRule);
        if (problem != null) {
            throw ApiException.e2b(400, field + " " + problem + "; " + (valueRule
                    ? "NUL and unpaired surrogates are not allowed"
                    : "control characters, bidirectional controls and unpaired surrogates are not allowed"));
        }
        return value;
    }

    private static boolean isBidiControl(int cp) {
        return switch (Character.getDirectionality(cp)) {
            case Character.DIRECTIONALITY_LEFT_TO_RIGHT_EMBEDDING, Character.DIRECTIONALITY_LEFT_TO_RIGHT_OVERRIDE,
                 Character.DIRECTIONALITY_RIGHT_TO_LEFT_EMBEDDING, Character.DIRECTIONALITY_RIGHT_TO_LEFT_OVERRIDE,
                 Character.DIRECTIONALITY_POP_DIRECTIONAL_FORMAT, Character.DIRECTIONALITY_LEFT_TO_RIGHT_ISOLATE,
                 Character.DIRECTIONALITY_RIGHT_TO_LEFT_ISOLATE, Character.DIRECTIONALITY_FIRST_STRONG_ISOLATE,
                 Character.DIRECTIONALITY_POP_DIRECTIONAL_ISOLATE -> true;
            // the marks (LRM, RLM, ALM) have the directionality of strong letters; name them
            default -> cp == 0x200E || cp == 0x200F || cp == 0x061C;
        };
    }

    private static String describe(int cp, int index, String what) {
        return String.format("holds U+%04X (%s) at index %d", cp, what, index);
    }
}
