package io.agentbox.manager.store;

import java.nio.file.Path;

/** The snapshot store contract on the embedded H2 file database. */
class H2SnapshotStoreTest extends SnapshotStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return StoreConfig.h2(dataDir);
    }
}
