package io.agentbox.manager.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Memory of a local server process, its process tree and its sandboxes' processes, read from /proc
 * ({@code smaps_rollup}: Rss and Pss in KiB; Pss splits shared pages among their users, so it
 * is what one more process really costs), and the JVM's used heap after a full GC from
 * {@code jcmd <pid> GC.run} / {@code GC.heap_info} (needs the JDK's jcmd and the same user).
 */
final class ProcessMemory {
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    /** Bytes: the server's own RSS, its heap after GC, and the summed RSS / PSS of every descendant. */
    record Snapshot(long serverRss, long heapUsed, int descendants, long descendantsRss, long descendantsPss) {}

    private ProcessMemory() {}

    static Snapshot of(long pid) {
        long heap = heapAfterGc(pid);
        long[] own = rollup(pid);
        long rss = 0;
        long pss = 0;
        List<Long> tree = sandboxProcesses(pid);
        for (long child : tree) {
            long[] m = rollup(child);
            rss += m[0];
            pss += m[1];
        }
        return new Snapshot(own[0], heap, tree.size(), rss, pss);
    }

    /** [rss, pss] in bytes; zeros for a process that is gone or unreadable. */
    private static long[] rollup(long pid) {
        long rss = 0;
        long pss = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/smaps_rollup"))) {
                if (line.startsWith("Rss:")) {
                    rss = kib(line);
                } else if (line.startsWith("Pss:")) {
                    pss = kib(line);
                }
            }
        } catch (IOException e) {
            // ended meanwhile
        }
        return new long[] {rss, pss};
    }

    private static long kib(String line) {
        String[] f = line.trim().split("\\s+");
        return Long.parseLong(f[1]) * 1024;
    }

    /**
     * Every live descendant of {@code root} plus every process in a sandbox cgroup
     * ({@code /agentbox/<id>}: crun hands a container's init to the host's init, so sandboxes are
     * not in the server's process tree), from one pass over /proc.
     */
    private static List<Long> sandboxProcesses(long root) {
        Map<Long, List<Long>> children = new HashMap<>();
        Set<Long> inSandboxes = new HashSet<>();
        try (var dirs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path d : dirs) {
                try {
                    String stat = Files.readString(d.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long ppid = Long.parseLong(f[1]);
                    long pid = Long.parseLong(d.getFileName().toString());
                    children.computeIfAbsent(ppid, k -> new ArrayList<>()).add(pid);
                    if (Files.readString(d.resolve("cgroup")).contains(":/agentbox/")) {
                        inSandboxes.add(pid);
                    }
                } catch (IOException | RuntimeException e) {
                    // ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new BenchException("cannot read /proc: " + e.getMessage());
        }
        Set<Long> out = new LinkedHashSet<>();
        List<Long> todo = new ArrayList<>(List.of(root));
        while (!todo.isEmpty()) {
            long p = todo.remove(todo.size() - 1);
            for (long c : children.getOrDefault(p, List.of())) {
                out.add(c);
                todo.add(c);
            }
        }
        out.addAll(inSandboxes);
        return new ArrayList<>(out);
    }

    private static long heapAfterGc(long pid) {
        jcmd(pid, "GC.run");
        String info = jcmd(pid, "GC.heap_info");
        Matcher m = HEAP_USED.matcher(info);
        if (!m.find()) {
            throw new BenchException("jcmd " + pid + " GC.heap_info: no 'used' figure in: " + info);
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    private static String jcmd(long pid, String command) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!Files.isExecutable(jcmd)) {
            throw new BenchException("density needs the JDK's jcmd, not found at " + jcmd);
        }
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new BenchException("jcmd " + pid + " " + command + " failed: " + out.strip());
            }
            return out;
        } catch (IOException e) {
            throw new BenchException("jcmd: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
    }
}
