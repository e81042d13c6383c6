package io.agentbox.manager.store;

import java.nio.file.Path;

/** The template-build store contract on the embedded H2 file database. */
class H2TemplateBuildStoreTest extends TemplateBuildStoreContract {
    @Override
    StoreConfig freshDatabase(Path dataDir) {
        return StoreConfig.h2(dataDir);
    }
}
