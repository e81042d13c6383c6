package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * Waits for a process that is not our child to end. {@link ProcessHandle#onExit()} polls slowly
 * for non-children and counts zombies as alive (orphans may wait long for a reaper), so this
 * reads /proc directly and treats a zombie as ended.
 */
final class Reaped {
    private Reaped() {}

    /**
     * @return true when the process ended (gone or zombie) within {@code timeoutMs}; polls every
     *     0.1 ms at first (a killed sandbox init usually ends within a millisecond: a reset waits
     *     for it), backing off to 20 ms
     */
    static boolean await(long pid, long timeoutMs) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        long pauseNanos = 100_000;
        while (true) {
            if (ended(pid)) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            // parkNanos, not Thread.sleep(0, n): JDK 17 rounds a sub-millisecond sleep up to 1 ms
            LockSupport.parkNanos(pauseNanos);
            if (Thread.currentThread().isInterrupted()) {
                return ended(pid);
            }
            pauseNanos = Math.min(20_000_000, pauseNanos * 3 / 2);
        }
    }

    static boolean ended(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            int close = stat.lastIndexOf(')');
            char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
            return state == 'Z' || state == 'X';
        } catch (IOException e) {
            return true; // no such process
        }
    }
}
