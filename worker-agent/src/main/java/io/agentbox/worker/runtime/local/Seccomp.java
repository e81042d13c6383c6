package io.agentbox.worker.runtime.local;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The seccomp profile of every sandbox, in OCI runtime-spec form ({@code linux.seccomp}): allow
 * by default, like Docker's default profile deny with EPERM what lets a process reach beyond its
 * container even as root inside: new user namespaces (where it would get a full capability set),
 * kernel keyrings, BPF, perf, module and kexec calls, the mount API, handle-based opens,
 * userfaultfd, io_uring, swap, reboot, accounting, quotas, clock and syslog changes, and personality flags
 * that weaken address-space randomisation. {@code clone3} answers ENOSYS, so libc falls back to
 * {@code clone}, whose flags a classic BPF filter can inspect (clone3 passes them in memory).
 */
final class Seccomp {
    static final int EPERM = 1;
    static final int ENOSYS = 38;
    static final long CLONE_NEWUSER = 0x10000000L;
    /** Syscalls always refused with EPERM. */
    static final List<String> DENIED = List.of(
            "add_key", "keyctl", "request_key",
            "bpf", "perf_event_open",
            "kexec_load", "kexec_file_load",
            "init_module", "finit_module", "delete_module", "create_module",
            "open_by_handle_at", "name_to_handle_at",
            "userfaultfd",
            // io_uring: a large kernel attack surface that seccomp cannot inspect (Docker's default denies it too)
            "io_uring_setup", "io_uring_enter", "io_uring_register",
            "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr",
            "pivot_root", "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
            "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
            "syslog", "lookup_dcookie", "nfsservctl", "vm86", "vm86old", "uselib", "ustat", "sysfs", "_sysctl",
            "iopl", "ioperm", "get_kernel_syms", "query_module");
    /** personality(2) flags refused: they turn off ASLR or make data executable. */
    static final long[] PERSONALITY_FLAGS = {0x0040000L /* ADDR_NO_RANDOMIZE */, 0x0400000L /* READ_IMPLIES_EXEC */,
            0x0200000L /* ADDR_COMPAT_LAYOUT */, 0x0100000L /* MMAP_PAGE_ZERO */};

    private Seccomp() {}

    static Map<String, Object> profile() {
        List<Object> rules = new ArrayList<>();
        rules.add(Map.of("names", DENIED, "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM));
        rules.add(Map.of("names", List.of("clone3"), "action", "SCMP_ACT_ERRNO", "errnoRet", ENOSYS));
        rules.add(Map.of("names", List.of("unshare"), "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM,
                "args", List.of(masked(0, CLONE_NEWUSER))));
        rules.add(Map.of("names", List.of("clone"), "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM,
                "args", List.of(masked(0, CLONE_NEWUSER))));
        for (long flag : PERSONALITY_FLAGS) {
            rules.add(Map.of("names", List.of("personality"), "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM,
                    "args", List.of(masked(0, flag),
                            Map.of("index", 0, "value", 0xffffffffL, "op", "SCMP_CMP_NE"))));
        }
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("defaultAction", "SCMP_ACT_ALLOW");
        p.put("architectures", "aarch64".equals(System.getProperty("os.arch"))
                ? List.of("SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM")
                : List.of("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"));
        p.put("syscalls", rules);
        return p;
    }

    /** Matches when {@code (arg & flag) == flag}. */
    private static Map<String, Object> masked(int index, long flag) {
        return Map.of("index", index, "value", flag, "valueTwo", flag, "op", "SCMP_CMP_MASKED_EQ");
    }
}
