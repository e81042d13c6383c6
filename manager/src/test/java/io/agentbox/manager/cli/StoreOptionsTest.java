package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.store.StoreConfig;
import io.agentbox.manager.store.StoreException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** How {@code agentbox hub} turns its store and management options into settings. */
class StoreOptionsTest {
    @TempDir
    Path dir;

    HubCommand parse(String... args) {
        HubCommand hub = new HubCommand();
        new CommandLine(hub).parseArgs(args);
        return hub;
    }

    @Test
    void postgresUrlUserAndPasswordFileAreUsed() throws Exception {
        Path password = Files.writeString(dir.resolve("pw"), "s3cret\n");
        HubCommand hub = parse("--store-url", "jdbc:postgresql://db:5432/agentbox", "--store-user", "hub",
                "--store-password-file", password.toString(), "--management-port", "0", "--management-host", "10.0.0.1");
        StoreConfig config = hub.store.toStoreConfig(dir);
        assertThat(config).isEqualTo(new StoreConfig("jdbc:postgresql://db:5432/agentbox", "hub", "s3cret"));
        assertThat(config.toString()).doesNotContain("s3cret");
        assertThat(hub.management.port).isZero();
        assertThat(hub.management.host).isEqualTo("10.0.0.1");
    }

    @Test
    void withoutAUrlTheStoreIsH2UnderTheDataDirectoryAndManagementStaysOnLoopback() throws Exception {
        StoreOptions noUrl = new StoreOptions(); // what parsing gives when neither --store-url nor $AGENTBOX_STORE_URL is set
        assertThat(noUrl.toStoreConfig(dir)).isEqualTo(StoreConfig.embedded(dir));
        HubCommand hub = parse();
        assertThat(hub.management.host).isEqualTo("127.0.0.1");
        assertThat(hub.management.port).isEqualTo(9004);
        assertThat(hub.tokenFile).isNull();
    }

    @Test
    void otherDatabasesAreRefused() {
        HubCommand hub = parse("--store-url", "jdbc:mysql://db/agentbox");
        assertThatThrownBy(() -> hub.store.toStoreConfig(dir)).isInstanceOf(StoreException.class)
                .hasMessageContaining("jdbc:postgresql: or jdbc:h2:");
    }
}
