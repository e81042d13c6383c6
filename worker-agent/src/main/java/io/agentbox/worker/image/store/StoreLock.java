package io.agentbox.worker.image.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The writers' lock of one store: a JVM lock (file locks are per process, so threads need their
 * own) plus an exclusive {@code flock}-style lock on {@code <store>/lock} against other
 * processes, e.g. {@code agentbox image import} while a worker runs. Held only for short
 * metadata updates and GC, never while downloading or unpacking.
 */
final class StoreLock {
    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    private final Path file;
    private final ReentrantLock jvm;

    StoreLock(Path file) {
        this.file = file.toAbsolutePath().normalize();
        this.jvm = JVM_LOCKS.computeIfAbsent(this.file, f -> new ReentrantLock());
    }

    /** Held lock; close releases it. Re-entrant within a thread. */
    interface Held extends AutoCloseable {
        @Override
        void close() throws IOException;
    }

    Held acquire() throws IOException {
        jvm.lock();
        if (jvm.getHoldCount() > 1) {
            return jvm::unlock;
        }
        FileChannel ch = null;
        try {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = ch.lock();
            FileChannel channel = ch;
            return () -> {
                try {
                    lock.release();
                    channel.close();
                } finally {
                    jvm.unlock();
                }
            };
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            jvm.unlock();
            throw e;
        }
    }
}
