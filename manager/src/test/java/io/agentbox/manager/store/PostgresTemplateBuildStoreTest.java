package io.agentbox.manager.store;

import java.nio.file.Path;

/** The template-build store contract on a real PostgreSQL server (fails, never skips, when it cannot start). */
class PostgresTemplateBuildStoreTest extends TemplateBuildStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return EmbeddedPostgresServer.freshDatabase();
    }
}
