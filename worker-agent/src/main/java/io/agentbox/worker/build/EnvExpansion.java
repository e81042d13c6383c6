package io.agentbox.worker.build;

import java.util.Map;

/**
 * Expands {@code $NAME} and {@code ${NAME}} in an ENV step's value against the variables set so far,
 * as E2B's builder does (docs/e2b-wire.md#step-types: values are shell-expanded, command
 * substitution neutralised). Nothing is ever run: {@code $(…)} and backquotes stay as written, an
 * unknown variable expands to the empty string, {@code \$} is a literal dollar.
 */
final class EnvExpansion {
    private EnvExpansion() {}

    /** {@code value} with its variables replaced from {@code vars}. */
    static String expand(String value, Map<String, String> vars) {
        StringBuilder out = new StringBuilder(value.length());
        int i = 0;
        while (i < value.length()) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length() && value.charAt(i + 1) == '$') {
                out.append('$');
                i += 2;
            } else if (c == '$' && i + 1 < value.length() && value.charAt(i + 1) == '{') {
                int end = value.indexOf('}', i + 2);
                String name = end < 0 ? null : value.substring(i + 2, end);
                if (name != null && isName(name)) {
                    out.append(vars.getOrDefault(name, ""));
                    i = end + 1;
                } else {
                    out.append(c);
                    i++;
                }
            } else if (c == '$' && i + 1 < value.length() && isNameStart(value.charAt(i + 1))) {
                int j = i + 1;
                while (j < value.length() && isNamePart(value.charAt(j))) {
                    j++;
                }
                out.append(vars.getOrDefault(value.substring(i + 1, j), ""));
                i = j;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    static boolean isName(String s) {
        if (s.isEmpty() || !isNameStart(s.charAt(0))) {
            return false;
        }
        for (int i = 1; i < s.length(); i++) {
            if (!isNamePart(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isNameStart(char c) {
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }

    private static boolean isNamePart(char c) {
        return isNameStart(c) || (c >= '0' && c <= '9');
    }
}
