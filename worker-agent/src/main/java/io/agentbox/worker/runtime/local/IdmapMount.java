package io.agentbox.worker.runtime.local;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;

/**
 * Attaches an idmapped bind mount (kernel ≥ 5.12: {@code open_tree} + {@code mount_setattr(
 * MOUNT_ATTR_IDMAP)} + {@code move_mount}). Debian 12's mount(8) ignores {@code X-mount.idmap},
 * so this runs as its own short-lived JVM inside the runtime's mount namespace ({@code nsenter}),
 * once per runtime start: a JVM thread cannot enter another mount namespace itself.
 *
 * <p>Usage: {@code IdmapMount USERNS_FILE SOURCE TARGET}; the mount shows a file owned by id
 * {@code i} as the id that {@code i} maps to in the user namespace. Exit 0 on success, 1 with the
 * failing call and errno on stderr.
 */
public final class IdmapMount {
    // generic syscall numbers, the same on x86_64 and aarch64
    private static final long SYS_OPEN_TREE = 428;
    private static final long SYS_MOVE_MOUNT = 429;
    private static final long SYS_MOUNT_SETATTR = 442;
    private static final int AT_FDCWD = -100;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int OPEN_TREE_CLONE = 1;
    private static final int OPEN_TREE_CLOEXEC = 02000000;
    private static final long MOUNT_ATTR_IDMAP = 0x00100000L;
    private static final long MOUNT_ATTR_RDONLY = 0x00000001L;
    private static final int MOVE_MOUNT_F_EMPTY_PATH = 0x00000004;
    private static final int O_RDONLY_CLOEXEC = 02000000;

    private IdmapMount() {}

    interface LibC extends Library {
        LibC C = Native.load("c", LibC.class);

        long syscall(long number, Object... args);

        int open(String path, int flags);
    }

    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: IdmapMount USERNS_FILE SOURCE TARGET");
            System.exit(2);
        }
        int userns = LibC.C.open(args[0], O_RDONLY_CLOEXEC);
        check(userns, "open " + args[0]);
        long tree = LibC.C.syscall(SYS_OPEN_TREE, AT_FDCWD, args[1], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        check(tree, "open_tree " + args[1]);
        Memory attr = new Memory(32); // struct mount_attr { u64 attr_set, attr_clr, propagation, userns_fd }
        attr.clear();
        attr.setLong(0, MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY);
        attr.setLong(24, userns);
        check(LibC.C.syscall(SYS_MOUNT_SETATTR, (int) tree, "", AT_EMPTY_PATH, attr, 32L), "mount_setattr");
        check(LibC.C.syscall(SYS_MOVE_MOUNT, (int) tree, "", AT_FDCWD, args[2], MOVE_MOUNT_F_EMPTY_PATH),
                "move_mount to " + args[2]);
        System.exit(0);
    }

    private static void check(long result, String what) {
        if (result < 0) {
            System.err.println(what + " failed: errno " + Native.getLastError());
            System.exit(1);
        }
    }
}
