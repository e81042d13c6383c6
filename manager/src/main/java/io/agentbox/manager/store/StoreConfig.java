package io.agentbox.manager.store;

import java.nio.file.Path;

/**
 * Where the hub store lives: a JDBC URL plus credentials.
 *
 * <p>Three kinds: the embedded default, a PostgreSQL server the hub runs itself with its cluster
 * under the data directory ({@code embedded:postgresql:<dir>}, see {@link EmbeddedPostgresStore});
 * an external PostgreSQL 14+ ({@code jdbc:postgresql://host:port/db}); and H2 ({@code jdbc:h2:...},
 * quick to start, but a hub killed with {@code kill -9} can lose its last writes: not crash-safe).
 * Anything else is refused up front.
 *
 * @param url      {@code embedded:postgresql:}, a JDBC URL {@code jdbc:postgresql:} or {@code jdbc:h2:}
 * @param user     database user; empty for H2's default
 * @param password database password; empty when none (never printed by {@link #toString()})
 */
public record StoreConfig(String url, String user, String password) {
    /** Directory (under the data directory) of the embedded H2 database. */
    public static final String H2_DIR = "hub";
    private static final String EMBEDDED = "embedded:postgresql:";

    public StoreConfig {
        if (url == null || !(url.startsWith("jdbc:h2:") || url.startsWith("jdbc:postgresql:") || url.startsWith(EMBEDDED))) {
            throw StoreException.invalid("store URL must start with jdbc:postgresql: or jdbc:h2:, got '" + url + "'");
        }
        user = user == null ? "" : user;
        password = password == null ? "" : password;
    }

    /** The embedded default: a PostgreSQL server run by the hub, its cluster in {@code <dataDir>/hub/postgres}. */
    public static StoreConfig embedded(Path dataDir) {
        return new StoreConfig(EMBEDDED + dataDir.toAbsolutePath().resolve(H2_DIR).resolve(EmbeddedPostgresStore.CLUSTER_DIR), "", "");
    }

    /** True for {@link #embedded}. */
    public boolean isEmbeddedPostgres() {
        return url.startsWith(EMBEDDED);
    }

    /** The cluster directory of {@link #embedded}. */
    Path embeddedDir() {
        return Path.of(url.substring(EMBEDDED.length()));
    }

    /** The embedded H2 file database {@code <dataDir>/hub/hub.mv.db} (opt-in: not crash-safe). */
    public static StoreConfig h2(Path dataDir) {
        Path file = dataDir.toAbsolutePath().resolve(H2_DIR).resolve("hub");
        return new StoreConfig("jdbc:h2:file:" + file + ";DB_CLOSE_ON_EXIT=FALSE", "sa", "");
    }

    /** True for an embedded H2 file database (the store then also owns its directory's permissions). */
    public boolean isH2File() {
        return url.startsWith("jdbc:h2:file:");
    }

    public boolean isPostgres() {
        return url.startsWith("jdbc:postgresql:");
    }

    @Override
    public String toString() {
        return "StoreConfig[url=" + url + ", user=" + user + ", password=" + (password.isEmpty() ? "" : "***") + "]";
    }
}
