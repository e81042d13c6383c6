package io.agentbox.manager.metrics;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One Prometheus text exposition (format 0.0.4) as the dashboard test needs it: the sample names
 * (with their {@code _bucket}, {@code _count}, {@code _sum}, {@code _total} suffixes, as PromQL
 * reads them) and each family's {@code # TYPE}.
 */
record Scrape(String text, Set<String> samples, Map<String, String> types) {

    static Scrape parse(String text) {
        Set<String> samples = new TreeSet<>();
        Map<String, String> types = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                types.put(parts[2], parts[3]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                int end = 0;
                while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') {
                    end++;
                }
                samples.add(line.substring(0, end));
            }
        }
        return new Scrape(text, samples, types);
    }

    /**
     * Whether PromQL's {@code name} selects samples here: a sample of that name, and for a
     * {@code _bucket} name one of a family typed {@code histogram} (a summary's or a gauge's
     * look-alike does not count).
     */
    boolean has(String name) {
        if (!samples.contains(name)) {
            return false;
        }
        if (name.endsWith("_bucket")) {
            return "histogram".equals(types.get(name.substring(0, name.length() - "_bucket".length())));
        }
        return true;
    }
}
