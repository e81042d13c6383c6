package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Single-process reads of /proc. {@link ProcessHandle#children()} lists every process of the host
 * (with 1,000 sandboxes, 3,000+ entries: tens of ms per call), so no hot path may use it; these
 * read one small file each.
 */
final class ProcFs {
    private static final boolean HAS_CHILDREN_FILES =
            Files.exists(Path.of("/proc/self/task/" + ProcessHandle.current().pid() + "/children"));

    private ProcFs() {}

    /** The oldest live child of {@code pid}, or -1 when it has none (or is gone). */
    static long firstChild(long pid) {
        if (!HAS_CHILDREN_FILES) { // kernel without CONFIG_PROC_CHILDREN: the slow scan is all there is
            return ProcessHandle.of(pid).flatMap(h -> h.children().findFirst()).map(ProcessHandle::pid).orElse(-1L);
        }
        try {
            String children = Files.readString(Path.of("/proc/" + pid + "/task/" + pid + "/children"));
            int end = children.indexOf(' ');
            String first = (end < 0 ? children : children.substring(0, end)).trim();
            return first.isEmpty() ? -1 : Long.parseLong(first);
        } catch (IOException | NumberFormatException e) {
            return -1; // gone
        }
    }

    /**
     * The child of {@code parent} whose pid in its own (innermost) pid namespace is {@code nsPid}
     * (the NSpid line of /proc/PID/status), or -1. crun exec briefly has a helper child too.
     */
    static long childWithNsPid(long parent, int nsPid) {
        for (int attempt = 0; attempt < 100; attempt++) {
            try {
                String children = Files.readString(Path.of("/proc/" + parent + "/task/" + parent + "/children")).trim();
                for (String c : children.isEmpty() ? new String[0] : children.split(" ")) {
                    if (nsPid(Long.parseLong(c)) == nsPid) {
                        return Long.parseLong(c);
                    }
                }
            } catch (IOException | NumberFormatException e) {
                return -1;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
        return -1;
    }

    /** The innermost namespace pid of {@code pid}, or -1. */
    static long nsPid(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("NSpid:")) {
                    String[] f = line.substring(6).trim().split("\\s+");
                    return Long.parseLong(f[f.length - 1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone
        }
        return -1;
    }

    /** The executable name of {@code pid} (what it exec'd last, at most 15 bytes), or null when it is gone. */
    static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
        } catch (IOException e) {
            return null;
        }
    }
}
