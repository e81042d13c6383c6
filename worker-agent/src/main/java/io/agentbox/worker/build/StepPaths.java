package io.agentbox.worker.build;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Path rules of COPY and WORKDIR (docs/e2b-wire.md#step-types, docs/e2b-wire.md#copy-placement): resolving a target
 * against the current WORKDIR, and the source root of a COPY source (its glob prefix).
 */
final class StepPaths {
    private StepPaths() {}

    /**
     * {@code path} made absolute against {@code base} ({@code .} and {@code ..} resolved, never above
     * {@code /}); a trailing {@code /} of {@code path} is kept, as COPY's placement depends on it.
     */
    static String resolve(String base, String path) {
        boolean slash = path.endsWith("/") || path.equals(".") || path.endsWith("/.");
        String joined = path.startsWith("/") ? path : base + "/" + path;
        Deque<String> parts = new ArrayDeque<>();
        for (String p : joined.split("/")) {
            if (p.isEmpty() || p.equals(".")) {
                continue;
            }
            if (p.equals("..")) {
                parts.pollLast();
            } else {
                parts.addLast(p);
            }
        }
        String abs = "/" + String.join("/", parts);
        return slash && !abs.equals("/") ? abs + "/" : abs;
    }

    /**
     * The entry of the uploaded archive a COPY source names, relative to the archive's root: the
     * source itself, or for a glob the directory before the first glob character ({@code folder/*.txt}
     * → {@code folder}, {@code *.txt} → {@code .}).
     *
     * @throws IllegalArgumentException for an absolute source or one with a {@code ..} component
     */
    static String sourceRoot(String src) {
        String s = src;
        while (s.startsWith("./")) {
            s = s.substring(2);
        }
        if (s.startsWith("/")) {
            throw new IllegalArgumentException("source '" + src + "' must be relative to the build context");
        }
        for (String part : s.split("/")) {
            if (part.equals("..")) {
                throw new IllegalArgumentException("source '" + src + "' leaves the build context (..)");
            }
        }
        int glob = firstGlob(s);
        if (glob >= 0) {
            int cut = s.lastIndexOf('/', glob);
            s = cut < 0 ? "." : s.substring(0, cut);
        }
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s.isEmpty() ? "." : s;
    }

    private static int firstGlob(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == '{') {
                return i;
            }
        }
        return -1;
    }
}
