package io.agentbox.manager.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression (or a Grafana {@code label_values(metric, label)} query)
 * reads: identifiers that are neither functions, keywords, label names (in matchers and in
 * {@code by}/{@code without}/{@code on}/{@code ignoring} lists) nor parts of strings, durations or
 * Grafana variables. Enough for the expressions of a dashboard, not a full PromQL parser.
 */
final class PromQlNames {
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*}");
    private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
    private static final Pattern LABEL_LIST = Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?\\w+}?");
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_:][A-Za-z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan", "Inf", "NaN");

    private PromQlNames() {}

    static Set<String> of(String expr) {
        String s = STRING.matcher(expr).replaceAll(" ");
        s = MATCHERS.matcher(s).replaceAll(" ");
        s = RANGE.matcher(s).replaceAll(" ");
        s = LABEL_LIST.matcher(s).replaceAll(" ");
        s = VARIABLE.matcher(s).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENT.matcher(s);
        while (m.find()) {
            String token = m.group();
            int next = m.end();
            while (next < s.length() && Character.isWhitespace(s.charAt(next))) {
                next++;
            }
            boolean function = next < s.length() && s.charAt(next) == '(';
            // a token glued to a digit before it is part of a number (1e3)
            boolean inNumber = m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1));
            if (!function && !inNumber && !KEYWORDS.contains(token)) {
                names.add(token);
            }
        }
        return names;
    }

    /**
     * Every metric name a Grafana dashboard's queries read: each panel target's {@code expr}
     * (nested rows included) and each query variable's {@code label_values(metric, label)}.
     */
    static Set<String> ofDashboard(JsonNode dashboard) {
        Set<String> names = new TreeSet<>();
        collectExprs(dashboard.path("panels"), names);
        for (JsonNode v : dashboard.path("templating").path("list")) {
            String q = v.path("query").isObject() ? v.path("query").path("query").asText() : v.path("query").asText();
            Matcher m = Pattern.compile("label_values\\(\\s*([A-Za-z_:][A-Za-z0-9_:]*)\\s*,").matcher(q);
            if (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    private static void collectExprs(JsonNode panels, Set<String> names) {
        for (JsonNode p : panels) {
            for (JsonNode t : p.path("targets")) {
                if (t.hasNonNull("expr")) {
                    names.addAll(of(t.get("expr").asText()));
                }
            }
            collectExprs(p.path("panels"), names);
        }
    }
}
