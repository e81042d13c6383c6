package io.agentbox.worker.runtime.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.worker.image.HostIdRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A sandbox's OCI runtime bundle {@code config.json} (runtime-spec 1.0): all namespaces (network
 * unless the template asks for the host's), ids 0..65535 mapped to {@link HostIdRange}, PID 1 =
 * the {@link SpawnerBinary spawner} (it starts commands and reaps orphans) or, without it,
 * {@code catatonit -P} (it reaps orphans and does nothing else), bound read-only at /.agentbox/init, Docker's default capabilities for root, no_new_privs, the {@link Seccomp} profile,
 * Docker's masked and read-only /proc paths, rlimits no higher than the worker's own, and the
 * cgroup limits of the template.
 */
final class OciConfig {
    /** Docker's default capability set (moby oci/caps/defaults.go). */
    static final List<String> CAPS = List.of("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
            "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
            "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE");
    static final List<String> MASKED = List.of("/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
            "/sys/firmware", "/sys/devices/virtual/powercap");
    static final List<String> READONLY = List.of("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger");
    static final long CPU_PERIOD_US = 100_000;
    /** Where PID 1's program is bound: the spawner, or catatonit without it. */
    static final String INIT = "/.agentbox/init";
    /** The spawner's own tmpfs (mode 0700: root only) and its socket in it. */
    static final String SPAWNER_DIR = "/.agentbox/run";
    static final String SPAWNER_SOCKET = SPAWNER_DIR + "/spawner";
    static final int DEFAULT_PIDS = 1024;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @param memoryMb 0: no memory limit
     * @param cpuCount 0: no CPU quota
     * @param pidsLimit 0: {@value #DEFAULT_PIDS}
     * @param swapLimit whether to set the memory+swap limit (v1 needs swap accounting for it)
     * @param joinUserNs null: a new user namespace; else the file (an nsfs bind) of one to join,
     *     whose id mapping is already set (a reset keeps the sandbox's namespaces)
     * @param joinNetNs null: a new network namespace when {@code ownNetwork}; else one to join
     */
    record Spec(String id, Path rootfs, boolean ownNetwork, int memoryMb, int cpuCount, int pidsLimit,
                Path init, boolean spawner, Path busybox, long nofileHard, boolean swapLimit, Path joinUserNs, Path joinNetNs,
                String containerId) {
        Spec(String id, Path rootfs, boolean ownNetwork, int memoryMb, int cpuCount, int pidsLimit,
             Path init, boolean spawner, Path busybox, long nofileHard, boolean swapLimit) {
            this(id, rootfs, ownNetwork, memoryMb, cpuCount, pidsLimit, init, spawner, busybox, nofileHard, swapLimit, null, null, id);
        }

        /**
         * The same sandbox as container {@code containerId} (its cgroup {@code /agentbox/<containerId>})
         * on another root file system mount: a reset alternates two (see LocalRuntime's RESET).
         */
        Spec asContainer(String containerId, Path root) {
            return new Spec(id, root, ownNetwork, memoryMb, cpuCount, pidsLimit, init, spawner, busybox, nofileHard,
                    swapLimit, joinUserNs, joinNetNs, containerId);
        }

        /** The same sandbox started again inside the namespaces kept in these files. */
        Spec joining(Path userNs, Path netNs) {
            return new Spec(id, rootfs, ownNetwork, memoryMb, cpuCount, pidsLimit, init, spawner, busybox, nofileHard,
                    swapLimit, userNs, ownNetwork ? netNs : null, containerId);
        }
    }

    private OciConfig() {}

    static void write(Path file, Spec s) throws IOException {
        Files.write(file, JSON.writeValueAsBytes(config(s)));
    }

    static Map<String, Object> config(Spec s) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("ociVersion", "1.0.2");
        Map<String, Object> process = new LinkedHashMap<>();
        process.put("terminal", false);
        process.put("user", Map.of("uid", 0, "gid", 0));
        process.put("args", s.spawner() ? List.of(INIT, SPAWNER_SOCKET) : List.of(INIT, "-P"));
        process.put("env", List.of("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        process.put("cwd", "/");
        process.put("capabilities", Map.of("bounding", CAPS, "effective", CAPS, "permitted", CAPS));
        long nofile = Math.min(1_048_576L, s.nofileHard());
        process.put("rlimits", List.of(Map.of("type", "RLIMIT_NOFILE", "hard", nofile, "soft", nofile)));
        process.put("noNewPrivileges", true);
        c.put("process", process);
        c.put("root", Map.of("path", s.rootfs().toString(), "readonly", false));
        c.put("hostname", s.id());
        List<Object> mounts = new ArrayList<>();
        mounts.add(Map.of("destination", "/proc", "type", "proc", "source", "proc"));
        mounts.add(Map.of("destination", "/dev", "type", "tmpfs", "source", "tmpfs",
                "options", List.of("nosuid", "strictatime", "mode=755", "size=65536k")));
        mounts.add(Map.of("destination", "/dev/pts", "type", "devpts", "source", "devpts",
                "options", List.of("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5")));
        mounts.add(Map.of("destination", "/dev/shm", "type", "tmpfs", "source", "shm",
                "options", List.of("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")));
        mounts.add(Map.of("destination", "/dev/mqueue", "type", "mqueue", "source", "mqueue",
                "options", List.of("nosuid", "noexec", "nodev")));
        // a fresh sysfs needs the sandbox's own network namespace; without one bind the host's read-only
        mounts.add(s.ownNetwork()
                ? Map.of("destination", "/sys", "type", "sysfs", "source", "sysfs", "options", List.of("nosuid", "noexec", "nodev", "ro"))
                : Map.of("destination", "/sys", "type", "bind", "source", "/sys", "options", List.of("rbind", "nosuid", "noexec", "nodev", "ro")));
        mounts.add(Map.of("destination", INIT, "type", "bind", "source", s.init().toString(),
                "options", List.of("bind", "ro", "nosuid", "nodev")));
        if (s.spawner()) {
            // the spawner's socket: root-only, outside the writable layer (never part of a snapshot)
            mounts.add(Map.of("destination", SPAWNER_DIR, "type", "tmpfs", "source", "agentbox-run",
                    "options", List.of("nosuid", "nodev", "noexec", "mode=700", "size=64k", "nr_inodes=16")));
        }
        mounts.add(Map.of("destination", "/.agentbox/bin/busybox", "type", "bind", "source", s.busybox().toString(),
                "options", List.of("bind", "ro", "nosuid", "nodev")));
        c.put("mounts", mounts);

        Map<String, Object> linux = new LinkedHashMap<>();
        List<Map<String, Object>> idMap = List.of(Map.of("containerID", 0, "hostID", HostIdRange.BASE, "size", HostIdRange.SIZE));
        if (s.joinUserNs() == null) {
            linux.put("uidMappings", idMap);
            linux.put("gidMappings", idMap);
        }
        List<Object> ns = new ArrayList<>();
        for (String t : List.of("pid", "ipc", "uts", "mount", "cgroup")) {
            ns.add(Map.of("type", t));
        }
        ns.add(s.joinUserNs() == null ? Map.of("type", "user") : Map.of("type", "user", "path", s.joinUserNs().toString()));
        if (s.ownNetwork()) {
            ns.add(s.joinNetNs() == null ? Map.of("type", "network")
                    : Map.of("type", "network", "path", s.joinNetNs().toString()));
        }
        linux.put("namespaces", ns);
        linux.put("cgroupsPath", "/agentbox/" + s.containerId());
        Map<String, Object> resources = new LinkedHashMap<>();
        if (s.memoryMb() > 0) {
            long bytes = s.memoryMb() * 1024L * 1024L;
            Map<String, Object> mem = new LinkedHashMap<>();
            mem.put("limit", bytes);
            if (s.swapLimit()) {
                mem.put("swap", bytes); // memory + swap = memory: no swap
            }
            resources.put("memory", mem);
        }
        resources.put("pids", Map.of("limit", s.pidsLimit() > 0 ? s.pidsLimit() : DEFAULT_PIDS));
        if (s.cpuCount() > 0) {
            resources.put("cpu", Map.of("quota", s.cpuCount() * CPU_PERIOD_US, "period", CPU_PERIOD_US));
        }
        linux.put("resources", resources);
        linux.put("maskedPaths", MASKED);
        linux.put("readonlyPaths", READONLY);
        linux.put("seccomp", Seccomp.profile());
        c.put("linux", linux);
        return c;
    }
}
