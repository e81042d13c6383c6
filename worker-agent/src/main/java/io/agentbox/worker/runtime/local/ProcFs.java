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

    /** The executable name of {@code pid} (what it exec'd last, at most 15 bytes), or null when it is gone. */
    static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
        } catch (IOException e) {
            return null;
        }
    }
}
