package io.agentbox.manager.store;

import java.util.Map;
import java.util.regex.Pattern;

/** Input checks shared by the store's tables; each failure is an INVALID_ARGUMENT {@link StoreException}. */
final class Checks {
    /** Team and template names: DNS-label-like, so they fit sandbox metadata, labels and URLs unescaped. */
    static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    static final int MAX_TEXT = 1024;
    static final int MAX_MAP_ENTRIES = 256;
    static final int MAX_MAP_VALUE = 4096;

    private Checks() {}

    static String name(String what, String value) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw StoreException.invalid(what + " must be 1-63 lowercase letters, digits, '.', '_' or '-', "
                    + "starting with a letter or digit; got '" + value + "'");
        }
        return value;
    }

    static String text(String what, String value) {
        String v = value == null ? "" : value;
        if (v.length() > MAX_TEXT) {
            throw StoreException.invalid(what + " is longer than " + MAX_TEXT + " characters");
        }
        return v;
    }

    static int range(String what, int value, int min, int max) {
        if (value < min || value > max) {
            throw StoreException.invalid(what + " must be between " + min + " and " + max + ", got " + value);
        }
        return value;
    }

    static Map<String, String> stringMap(String what, Map<String, String> map) {
        if (map.size() > MAX_MAP_ENTRIES) {
            throw StoreException.invalid(what + " has more than " + MAX_MAP_ENTRIES + " entries");
        }
        for (Map.Entry<String, String> e : map.entrySet()) {
            if (e.getKey().isEmpty() || e.getKey().length() > 256 || e.getValue().length() > MAX_MAP_VALUE) {
                throw StoreException.invalid(what + ": keys must be 1-256 characters and values at most "
                        + MAX_MAP_VALUE + " (key '" + e.getKey() + "')");
            }
        }
        return map;
    }
}
