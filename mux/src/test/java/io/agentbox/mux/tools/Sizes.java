package io.agentbox.mux.tools;

import java.util.Locale;

/** Byte sizes for operators: parses {@code 1048576}, {@code 64k}, {@code 16MiB}, {@code 1g} (binary units). */
public final class Sizes {

    private Sizes() {
    }

    /**
     * Parses a size: digits with an optional unit k/kb/kib, m/mb/mib, g/gb/gib (all powers of 1024,
     * case-insensitive). Throws {@link IllegalArgumentException} with a readable message.
     */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty size");
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("not a size: '" + text + "' (e.g. 1048576, 64k, 16m, 1g)");
        }
        long shift = switch (s.substring(i).trim()) {
            case "", "b" -> 0;
            case "k", "kb", "kib" -> 10;
            case "m", "mb", "mib" -> 20;
            case "g", "gb", "gib" -> 30;
            default -> throw new IllegalArgumentException("unknown size unit in '" + text + "' (use k, m or g)");
        };
        long n;
        try {
            n = Long.parseLong(s.substring(0, i));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        return n << shift;
    }

    /** 1536 -> "1.5 KiB", 268435456 -> "256 MiB", 100 -> "100 B". */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        if (u == 0) {
            return bytes + " B";
        }
        return (v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v)) + " " + units[u];
    }
}
