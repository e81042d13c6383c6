package io.agentbox.manager.cli;

import io.agentbox.manager.store.StoreConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --store-url}, {@code --store-user}, {@code --store-password-file} (with environment fallbacks) of the hub modes. */
final class StoreOptions {
    @Option(names = "--store-url", defaultValue = "${env:AGENTBOX_STORE_URL}",
            description = "Hub database JDBC URL, e.g. jdbc:postgresql://db:5432/agentbox "
                    + "(default: $AGENTBOX_STORE_URL, else a PostgreSQL server the hub runs itself under the data directory; jdbc:h2:file:PATH for H2, which is not crash-safe).")
    String url;

    @Option(names = "--store-user", defaultValue = "${env:AGENTBOX_STORE_USER}",
            description = "Database user (default: $AGENTBOX_STORE_USER).")
    String user;

    @Option(names = "--store-password-file",
            description = "File holding the database password (default: $AGENTBOX_STORE_PASSWORD).")
    Path passwordFile;

    /** The configured database, or the embedded PostgreSQL under {@code dataDir} when no URL is given. */
    StoreConfig toStoreConfig(Path dataDir) throws IOException {
        if (url == null || url.isBlank()) {
            return StoreConfig.embedded(dataDir);
        }
        String password = passwordFile != null
                ? Files.readString(passwordFile, StandardCharsets.UTF_8).strip()
                : System.getenv("AGENTBOX_STORE_PASSWORD");
        return new StoreConfig(url.strip(), user, password);
    }
}
