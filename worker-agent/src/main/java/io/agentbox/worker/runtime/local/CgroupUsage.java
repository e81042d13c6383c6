package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a sandbox's CPU and memory accounting from its cgroup ({@code /agentbox/<id>}).
 *
 * <ul>
 *   <li>v1: {@code cpuacct/…/cpuacct.usage} (ns); {@code memory/…/memory.usage_in_bytes},
 *       {@code memory.stat} {@code total_cache}, {@code memory.limit_in_bytes} (a value near
 *       2^63 when unlimited).</li>
 *   <li>v2: {@code cpu.stat} {@code usage_usec}; {@code memory.current}, {@code memory.stat}
 *       {@code file}, {@code memory.max} ({@code max} when unlimited).</li>
 * </ul>
 * Used memory is the charge minus the page cache, so that files the sandbox wrote to its tmpfs
 * layer show as cache rather than as process memory.
 */
final class CgroupUsage {
    /** A v1 limit at or above this is "no limit" (the kernel reports PAGE_COUNTER_MAX pages). */
    private static final long V1_UNLIMITED = 1L << 62;

    /** CPU ns and memory bytes of one read. */
    record Reading(long cpuNanos, long memUsed, long memCache, long memLimit) {}

    private CgroupUsage() {}

    /** @return the reading, or null when the cgroup is gone (the sandbox ended) */
    static Reading read(Cgroups cgroups, String id) {
        try {
            if (cgroups.mode == Cgroups.Mode.V2) {
                Path d = Cgroups.ROOT.resolve("agentbox").resolve(id);
                long cpu = field(Files.readString(d.resolve("cpu.stat")), "usage_usec") * 1000;
                long current = number(d.resolve("memory.current"));
                long cache = field(Files.readString(d.resolve("memory.stat")), "file");
                String max = Files.readString(d.resolve("memory.max")).strip();
                return reading(cpu, current, cache, max.equals("max") ? -1 : Long.parseLong(max));
            }
            Path cpuDir = v1Dir("cpuacct", id);
            Path mem = Cgroups.ROOT.resolve("memory").resolve("agentbox").resolve(id);
            long cpu = number(cpuDir.resolve("cpuacct.usage"));
            long usage = number(mem.resolve("memory.usage_in_bytes"));
            long cache = field(Files.readString(mem.resolve("memory.stat")), "total_cache");
            long limit = number(mem.resolve("memory.limit_in_bytes"));
            return reading(cpu, usage, cache, limit >= V1_UNLIMITED ? -1 : limit);
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /**
     * Processes of the sandbox's cgroup the OOM killer ended: {@code oom_kill} of
     * {@code memory.events} (v2) or of {@code memory/…/memory.oom_control} (v1, kernel 4.13+).
     *
     * @return the count, or -1 when the cgroup is gone or the kernel does not report it
     */
    static long oomKills(Cgroups cgroups, String id) {
        Path file = cgroups.mode == Cgroups.Mode.V2
                ? Cgroups.ROOT.resolve("agentbox").resolve(id).resolve("memory.events")
                : Cgroups.ROOT.resolve("memory").resolve("agentbox").resolve(id).resolve("memory.oom_control");
        try {
            String text = Files.readString(file);
            return text.contains("oom_kill ") ? field(text, "oom_kill") : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    private static Reading reading(long cpu, long charged, long cache, long limit) {
        long c = Math.min(Math.max(0, cache), charged);
        return new Reading(cpu, charged - c, c, limit);
    }

    /** The v1 hierarchy holding {@code controller} (mounted alone or co-mounted as {@code cpu,cpuacct}). */
    private static Path v1Dir(String controller, String id) {
        Path alone = Cgroups.ROOT.resolve(controller);
        Path base = Files.isDirectory(alone) ? alone : Cgroups.ROOT.resolve("cpu,cpuacct");
        return base.resolve("agentbox").resolve(id);
    }

    private static long number(Path file) throws IOException {
        return Long.parseLong(Files.readString(file).strip());
    }

    /** The value of line {@code "<name> <value>"} in a flat keyed file; 0 when absent. */
    static long field(String text, String name) {
        for (String line : text.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp == name.length() && line.startsWith(name)) {
                return Long.parseLong(line.substring(sp + 1).strip());
            }
        }
        return 0;
    }
}
