package io.agentbox.manager.store;

import java.nio.file.Path;

/** The store contract on the embedded H2 file database (the default). */
class H2HubStoreTest extends HubStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return StoreConfig.h2(dataDir);
    }
}
