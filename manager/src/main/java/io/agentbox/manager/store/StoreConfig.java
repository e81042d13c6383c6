package io.agentbox.manager.store;

import java.nio.file.Path;

/**
 * Where the hub store lives: a JDBC URL plus credentials.
 *
 * <p>Two databases are supported: H2 ({@code jdbc:h2:file:...}, the embedded default) and
 * PostgreSQL 14+ ({@code jdbc:postgresql://host:port/db}). Anything else is refused up front.
 *
 * @param url      JDBC URL, {@code jdbc:h2:} or {@code jdbc:postgresql:}
 * @param user     database user; empty for H2's default
 * @param password database password; empty when none (never printed by {@link #toString()})
 */
public record StoreConfig(String url, String user, String password) {
    /** Directory (under the data directory) of the embedded H2 database. */
    public static final String H2_DIR = "hub";

    public StoreConfig {
        if (url == null || !(url.startsWith("jdbc:h2:") || url.startsWith("jdbc:postgresql:"))) {
            throw StoreException.invalid("store URL must start with jdbc:h2: or jdbc:postgresql:, got '" + url + "'");
        }
        user = user == null ? "" : user;
        password = password == null ? "" : password;
    }

    /** The embedded H2 file database {@code <dataDir>/hub/hub.mv.db}. */
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
