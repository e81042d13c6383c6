package io.agentbox.manager.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The default H2 file store under the data directory; the database-independent contract is {@link HubStoreContract}. */
class HubStoreTest {
    @TempDir
    Path dir;

    @Test
    void seedsBaseTemplateAndCreatesAdminKeyOnce() throws Exception {
        String key;
        try (HubStore store = HubStore.open(dir)) {
            assertThat(store.templates()).hasSize(1);
            assertThat(store.templates().get(0).getName()).isEqualTo("base");
            assertThat(store.templates().get(0).getPoolSize()).isEqualTo(4);
            assertThat(store.templates().get(0).getNetwork()).isEqualTo("isolated");

            Optional<String> created = store.ensureAdminKey();
            assertThat(created).isPresent();
            key = created.get();
            assertThat(key).matches("e2b_[0-9a-f]{40}");
            Path file = dir.resolve("admin-key");
            assertThat(Files.readString(file).trim()).isEqualTo(key);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            assertThat(store.ensureAdminKey()).isEmpty();
        }
        try (HubStore store = HubStore.open(dir)) { // migrations are idempotent, data persists
            assertThat(store.ensureAdminKey()).isEmpty();
            assertThat(store.authenticate(key)).contains(new Principal("admin", "admin"));
            assertThat(store.authenticate(key + "0")).isEmpty();
            assertThat(store.authenticate(null)).isEmpty();
            assertThat(store.templates()).hasSize(1);
        }
    }

    @Test
    void storesOnlyKeyHashes() throws Exception {
        String key;
        try (HubStore store = HubStore.open(dir)) {
            key = store.createApiKey("team-a", "user");
            assertThat(store.authenticate(key)).contains(new Principal("team-a", "user"));
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("hub")))).isEqualTo("rwx------");
        // the plaintext never reaches the embedded database's files (tables, write-ahead log)
        List<Path> files;
        try (var walk = Files.walk(dir.resolve("hub/postgres"))) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertThat(files).as("the embedded PostgreSQL cluster").anyMatch(f -> f.toString().contains("pg_wal"));
        String secret = key.substring("e2b_".length());
        for (Path f : files) {
            byte[] db = Files.readAllBytes(f);
            assertThat(new String(db, java.nio.charset.StandardCharsets.ISO_8859_1)).as(f.toString()).doesNotContain(secret);
        }
        assertThat(ApiKeys.hash("x")).hasSize(64);
    }

    @Test
    void aSecondHubOnTheSameDataDirectoryIsRefusedAndTheFirstKeepsWorking() throws Exception {
        try (HubStore first = HubStore.open(dir)) {
            String key = first.createApiKey("team-a", "user");
            assertThatThrownBy(() -> HubStore.open(dir)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("in use");
            // the refused start must not have stopped the first hub's server
            assertThat(first.authenticate(key)).contains(new Principal("team-a", "user"));
            assertThat(first.createApiKey("team-a", "user")).startsWith("e2b_");
        }
        try (HubStore again = HubStore.open(dir)) { // the lock went with the first store
            assertThat(again.templates()).hasSize(1);
        }
    }
}
