package io.agentbox.manager.cli;

import java.nio.file.Path;

final class DataDirs {
    private DataDirs() {}

    /** {@code $AGENTBOX_DATA_DIR}, else {@code ~/.agentbox}. */
    static Path defaultDataDir() {
        String env = System.getenv("AGENTBOX_DATA_DIR");
        return env != null && !env.isBlank() ? Path.of(env) : Path.of(System.getProperty("user.home"), ".agentbox");
    }
}
