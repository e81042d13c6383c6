package io.agentbox.manager.store;

import java.nio.file.Path;

/**
 * The store contract on a real PostgreSQL server (embedded binaries from Maven, see
 * {@link EmbeddedPostgresServer}). Fails, never skips, when PostgreSQL cannot start.
 */
class PostgresHubStoreTest extends HubStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return EmbeddedPostgresServer.freshDatabase();
    }
}
