package io.agentbox.manager.store;

import java.nio.file.Path;

/** The snapshot store contract on a real PostgreSQL server (fails, never skips, when it cannot start). */
class PostgresSnapshotStoreTest extends SnapshotStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return EmbeddedPostgresServer.freshDatabase();
    }
}
