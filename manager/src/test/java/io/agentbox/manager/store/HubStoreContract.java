package io.agentbox.manager.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.store.ChangeLog.Change;
import io.agentbox.manager.store.ChangeLog.Kind;
import io.agentbox.manager.store.ChangeLog.Op;
import io.agentbox.manager.store.StoreException.Reason;
import io.agentbox.manager.testing.ManualClock;
import io.agentbox.protocol.v1.Template;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every hub store database must do. Subclasses supply a fresh, empty database per test
 * ({@link H2HubStoreTest}, {@link PostgresHubStoreTest}); the tests are the same for both.
 */
abstract class HubStoreContract {
    @TempDir
    Path dataDir;
    final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    StoreConfig config;
    HubStore store;

    /** A fresh, empty database for one test. */
    abstract StoreConfig freshDatabase(Path dataDir);

    @BeforeEach
    void open() {
        config = freshDatabase(dataDir);
        store = HubStore.open(config, dataDir, clock);
    }

    @AfterEach
    void close() {
        store.close();
    }

    static void assertFails(Reason reason, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).reason()).isEqualTo(reason));
    }

    /** Every text value in every row of {@code table}, read with plain JDBC. */
    List<String> textValues(String table) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(config.url(), config.user(), config.password());
             Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM " + table)) {
            while (rs.next()) {
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    Object v = rs.getObject(i);
                    if (v instanceof String str) {
                        out.add(str);
                    }
                }
            }
        }
        return out;
    }

    // ---- migrations ----------------------------------------------------------------------------

    @Test
    void freshStoreHasTheBaseTemplateAndReopensIdempotently() {
        assertThat(store.templates()).extracting(Template::getName).containsExactly("base");
        Template base = store.template("base").orElseThrow();
        assertThat(base.getPoolSize()).isEqualTo(4);
        assertThat(base.getNetwork()).as("the built-in template's network since V4").isEqualTo("isolated");
        assertThat(base.getRuntime()).isEqualTo("local");
        assertThat(base.getImage()).isEmpty();
        assertThat(base.getPidsLimit()).isEqualTo(1024);
        store.teamStore().create("kept", "");
        long version = store.changeLog().currentVersion();
        store.close();

        store = HubStore.open(config, dataDir, clock);
        assertThat(store.teamStore().get("kept")).isPresent();
        assertThat(store.changeLog().currentVersion()).isEqualTo(version);
    }

    @Test
    void aStoreCreatedBeforeVersionsUpgradesWithItsKeysTemplatesAndSandboxes() throws Exception {
        StoreConfig old = freshDatabase(dataDir.resolve("v1"));
        try (com.zaxxer.hikari.HikariDataSource ds = new com.zaxxer.hikari.HikariDataSource()) {
            ds.setJdbcUrl(old.url());
            ds.setUsername(old.user());
            ds.setPassword(old.password());
            org.flywaydb.core.Flyway.configure().dataSource(ds).locations("classpath:db/hub").target("1").load().migrate();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO api_keys (key_hash, team, role, created_at) VALUES ('"
                        + ApiKeys.hash("e2b_old") + "', 'legacy', 'user', 5)");
                s.executeUpdate("INSERT INTO sandboxes (sandbox_id, cluster_id, template, team, metadata, created_at, end_at) "
                        + "VALUES ('abcdefghijkl-local', 'local', 'base', 'legacy', '{}', 1, 2)");
            }
        }
        try (HubStore upgraded = HubStore.open(old, dataDir.resolve("v1"), clock)) {
            assertThat(upgraded.authenticate("e2b_old")).contains(new Principal("legacy", "user"));
            ApiKeyRecord key = upgraded.apiKeyStore().byHash(ApiKeys.hash("e2b_old")).orElseThrow();
            assertThat(key.id()).isEqualTo(ApiKeys.hash("e2b_old").substring(0, 16));
            assertThat(upgraded.teamStore().get("legacy")).isPresent();
            assertThat(upgraded.templateStore().get("base").orElseThrow().spec().getRuntime()).isEqualTo("local");
            assertThat(upgraded.activeSandboxes("legacy")).extracting(SandboxRecord::sandboxId).containsExactly("abcdefghijkl-local");
            assertThat(upgraded.markEnded("abcdefghijkl-local", "killed")).isTrue();
            assertThat(upgraded.apiKeyStore().revoke(key.id()).resourceVersion()).isGreaterThan(key.resourceVersion());
        }
    }

    @Test
    void upgradingToImagesKeepsEveryTemplatesNetworkAndMovesBaseToIsolated() throws Exception {
        StoreConfig old = freshDatabase(dataDir.resolve("v3"));
        try (com.zaxxer.hikari.HikariDataSource ds = new com.zaxxer.hikari.HikariDataSource()) {
            ds.setJdbcUrl(old.url());
            ds.setUsername(old.user());
            ds.setPassword(old.password());
            org.flywaydb.core.Flyway.configure().dataSource(ds).locations("classpath:db/hub").target("3").load().migrate();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                // before V4 'isolated' meant loopback only, which is 'none' now
                s.executeUpdate("INSERT INTO templates (name, pool_size, network, default_timeout_seconds, created_at) "
                        + "VALUES ('sealed', 1, 'isolated', 60, 1), ('shared', 1, 'host', 60, 1)");
            }
        }
        try (HubStore upgraded = HubStore.open(old, dataDir.resolve("v3"), clock)) {
            assertThat(upgraded.template("sealed").orElseThrow().getNetwork()).isEqualTo("none");
            assertThat(upgraded.template("shared").orElseThrow().getNetwork()).isEqualTo("host");
            assertThat(upgraded.template("base").orElseThrow().getNetwork()).isEqualTo("isolated");
            assertThat(upgraded.template("shared").orElseThrow().getPidsLimit()).isEqualTo(1024);
            assertThat(upgraded.template("shared").orElseThrow().getImage()).isEmpty();
        }
    }

    // ---- API keys ------------------------------------------------------------------------------

    @Test
    void keysAreFoundByHashAndNeverStoredInPlaintext() throws Exception {
        CreatedApiKey created = store.apiKeyStore().create("team-a", "user", "ci runner", null);
        String plaintext = created.plaintext();
        assertThat(plaintext).matches("e2b_[0-9a-f]{40}");
        ApiKeyRecord rec = created.record();
        assertThat(rec.keyHash()).isEqualTo(ApiKeys.hash(plaintext));
        assertThat(rec.id()).isEqualTo(rec.keyHash().substring(0, 16));
        assertThat(rec.team()).isEqualTo("team-a");
        assertThat(rec.name()).isEqualTo("ci runner");
        assertThat(rec.createdAtMs()).isEqualTo(clock.millis());
        assertThat(rec.expiresAtMs()).isNull();
        assertThat(rec.revokedAtMs()).isNull();

        assertThat(store.authenticate(plaintext)).contains(new Principal("team-a", "user"));
        assertThat(store.apiKeyStore().byHash(rec.keyHash())).contains(rec);
        assertThat(store.apiKeyStore().byId(rec.id())).contains(rec);
        assertThat(store.authenticate(plaintext + "0")).isEmpty();
        assertThat(store.authenticate(null)).isEmpty();
        assertThat(store.authenticate("x".repeat(10_000))).isEmpty();
        assertThat(store.apiKeyStore().list("team-a")).containsExactly(rec);
        assertThat(store.apiKeyStore().list("team-b")).isEmpty();

        assertThat(textValues("api_keys")).isNotEmpty().noneMatch(v -> v.contains(plaintext.substring(4)));
    }

    @Test
    void cachedKeysAndTemplatesFollowChangesAtOnce() {
        CreatedApiKey a = store.apiKeyStore().create("team-a", "user", "", clock.millis() + 60_000);
        assertThat(store.authenticate(a.plaintext())).contains(new Principal("team-a", "user"));
        assertThat(store.authenticate(a.plaintext())).contains(new Principal("team-a", "user")); // now from the cache
        clock.advance(Duration.ofSeconds(61));
        assertThat(store.authenticate(a.plaintext())).isEmpty(); // expiry is checked on every use, cached or not

        CreatedApiKey b = store.apiKeyStore().create("team-a", "user", "", null);
        assertThat(store.authenticate(b.plaintext())).isPresent();
        store.apiKeyStore().revoke(b.record().id());
        assertThat(store.authenticate(b.plaintext())).isEmpty();

        TemplateRecord t = store.templateStore().create(spec("cached", 2), List.of());
        assertThat(store.template("cached").orElseThrow().getPoolSize()).isEqualTo(2);
        store.templateStore().update(spec("cached", 6), List.of(), t.resourceVersion());
        assertThat(store.template("cached").orElseThrow().getPoolSize()).isEqualTo(6);
        store.templateStore().delete("cached", null);
        assertThat(store.template("cached")).isEmpty();
    }

    @Test
    void revokedKeysAreRefusedAndLeaveTheSnapshot() {
        CreatedApiKey a = store.apiKeyStore().create("team-a", "user", "", null);
        CreatedApiKey b = store.apiKeyStore().create("team-a", "admin", "", null);
        ApiKeyRecord revoked = store.apiKeyStore().revoke(a.record().id());

        assertThat(revoked.revokedAtMs()).isEqualTo(clock.millis());
        assertThat(revoked.resourceVersion()).isGreaterThan(a.record().resourceVersion());
        assertThat(store.authenticate(a.plaintext())).isEmpty();
        assertThat(store.authenticate(b.plaintext())).contains(new Principal("team-a", "admin"));
        assertThat(store.apiKeyStore().list("team-a")).extracting(ApiKeyRecord::id)
                .containsExactlyInAnyOrder(a.record().id(), b.record().id());
        assertThat(store.apiKeyStore().snapshot().items()).extracting(ApiKeyRecord::id).containsExactly(b.record().id());

        assertFails(Reason.CONFLICT, () -> store.apiKeyStore().revoke(a.record().id()));
        assertFails(Reason.NOT_FOUND, () -> store.apiKeyStore().revoke("0123456789abcdef"));
    }

    @Test
    void keysExpireByTheStoreClock() {
        CreatedApiKey k = store.apiKeyStore().create("team-a", "user", "", clock.millis() + 3_600_000);
        assertThat(store.authenticate(k.plaintext())).isPresent();
        clock.advance(Duration.ofMinutes(59));
        assertThat(store.authenticate(k.plaintext())).isPresent();
        clock.advance(Duration.ofMinutes(1));
        assertThat(store.authenticate(k.plaintext())).isEmpty();
        // workers enforce expiry themselves, so an expired key still travels with its expiry
        assertThat(store.apiKeyStore().snapshot().items()).extracting(ApiKeyRecord::expiresAtMs)
                .containsExactly(k.record().expiresAtMs());
    }

    @Test
    void badKeyInputIsRefused() {
        assertFails(Reason.INVALID_ARGUMENT, () -> store.apiKeyStore().create("Team A", "user", "", null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.apiKeyStore().create("team-a", "root", "", null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.apiKeyStore().create("team-a", "user", "x".repeat(2000), null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.apiKeyStore().create("team-a", "user", "", clock.millis()));
        assertThat(store.apiKeyStore().list(null)).isEmpty();
    }

    @Test
    void aPresetAdminKeyIsStoredOnceNeverWrittenToAFileAndMalformedOnesAreRefused() {
        String preset = "e2b_" + "0123456789abcdef0123456789abcdef01234567";
        assertThat(store.ensureAdminKey(preset)).as("a preset key is not shown").isEmpty();
        assertThat(store.ensureAdminKey(preset)).isEmpty();
        assertThat(store.authenticate(preset)).contains(new Principal("admin", "admin"));
        assertThat(store.apiKeyStore().list(null)).filteredOn(k -> k.role().equals("admin")).hasSize(1);
        assertThat(Files.exists(dataDir.resolve(HubStore.ADMIN_KEY_FILE))).isFalse();
        assertThatThrownBy(() -> store.ensureAdminKey("e2b_short")).isInstanceOf(StoreException.class)
                .hasMessageContaining("40 lowercase hex");
        assertThatThrownBy(() -> store.apiKeyStore().importKey("admin", "admin", "", preset))
                .isInstanceOf(StoreException.class).hasMessageContaining("already stored");
    }

    @Test
    void adminKeyAndManagerTokenAreCreatedOnceAndWrittenOwnerOnly() throws Exception {
        String admin = store.ensureAdminKey().orElseThrow();
        assertThat(store.ensureAdminKey()).isEmpty();
        assertThat(store.authenticate(admin)).contains(new Principal("admin", "admin"));
        Path adminFile = dataDir.resolve(HubStore.ADMIN_KEY_FILE);
        assertThat(Files.readString(adminFile).trim()).isEqualTo(admin);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(adminFile))).isEqualTo("rw-------");

        String token = store.ensureManagerToken().orElseThrow();
        assertThat(store.ensureManagerToken()).isEmpty();
        assertThat(store.isManagerToken(token)).isTrue();
        assertThat(store.isManagerToken(token + "x")).isFalse();
        assertThat(store.isManagerToken(admin)).isFalse();
        assertThat(store.isManagerToken(null)).isFalse();
        Path tokenFile = dataDir.resolve(HubStore.MANAGER_TOKEN_FILE);
        assertThat(Files.readString(tokenFile).trim()).isEqualTo(token);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile))).isEqualTo("rw-------");
        assertThat(textValues("hub_settings")).noneMatch(v -> v.contains(token));
    }

    @Test
    void aMissingDataDirectoryIsCreatedBeforeTheAdminKeyIsWrittenThere() throws Exception {
        Path elsewhere = dataDir.resolve("not/yet/there");
        store.close();
        store = HubStore.open(config, elsewhere, clock);
        String admin = store.ensureAdminKey().orElseThrow();
        assertThat(Files.readString(elsewhere.resolve(HubStore.ADMIN_KEY_FILE)).trim()).isEqualTo(admin);
    }

    @Test
    void envdSecretIsStableAcrossReopen() {
        byte[] first = store.secret("s");
        assertThat(first).hasSize(32);
        store.close();
        store = HubStore.open(config, dataDir, clock);
        assertThat(store.secret("s")).isEqualTo(first);
    }

    // ---- teams ---------------------------------------------------------------------------------

    @Test
    void teamsAreCreatedExplicitlyOrByTheirFirstKeyAndDeletedOnlyWhenUnused() {
        Team explicit = store.teamStore().create("research", "the research group");
        assertThat(explicit.description()).isEqualTo("the research group");
        assertFails(Reason.CONFLICT, () -> store.teamStore().create("research", ""));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.teamStore().create("-bad", ""));

        CreatedApiKey k = store.apiKeyStore().create("implicit", "user", "", null);
        assertThat(store.teamStore().list()).extracting(Team::name).containsExactly("implicit", "research");

        assertFails(Reason.CONFLICT, () -> store.teamStore().delete("implicit"));
        store.apiKeyStore().revoke(k.record().id());
        store.teamStore().delete("implicit");
        assertThat(store.teamStore().get("implicit")).isEmpty();
        assertFails(Reason.NOT_FOUND, () -> store.teamStore().delete("implicit"));
    }

    /** A team's snapshots and built templates (their images are on workers) keep it from being deleted. */
    @Test
    void aTeamWithSnapshotsOrBuiltTemplatesIsNotDeleted() {
        store.teamStore().create("rl", "");
        var snap = store.snapshotStore().create("rl", "env", "default", "sbx1", "c1", io.agentbox.protocol.v1.Template
                .newBuilder().setName("snap-rl").setSnapshot("snap-rl").build(), () -> "tidrl").snap();
        assertFails(Reason.CONFLICT, () -> store.teamStore().delete("rl"));
        assertThatThrownBy(() -> store.teamStore().delete("rl")).hasMessageContaining("1 snapshots and 0 built templates");
        assertThat(store.snapshotStore().delete("rl", snap.alias(), snap.tag())).hasSize(1);

        var build = store.templateBuildStore().request("rl", "web", java.util.List.of("default"), 2, 1024, () -> "tplrl");
        assertThatThrownBy(() -> store.teamStore().delete("rl")).hasMessageContaining("0 snapshots and 1 built templates");
        assertThat(store.templateBuildStore().delete(build.templateId())).isTrue();
        store.teamStore().delete("rl");
        assertThat(store.teamStore().get("rl")).isEmpty();
    }

    // ---- templates -----------------------------------------------------------------------------

    static Template spec(String name, int poolSize) {
        return Template.newBuilder().setName(name).setPoolSize(poolSize).setDefaultTimeoutSeconds(60)
                .putEnvVars("LANG", "C.UTF-8").setCpuCount(2).setMemoryMb(512).build();
    }

    @Test
    void templatesCrudWithOptimisticVersions() {
        TemplateRecord created = store.templateStore().create(spec("python", 3), List.of("eu-1"));
        assertThat(created.spec().getRuntime()).isEqualTo("local");
        assertThat(created.spec().getNetwork()).isEqualTo("isolated");
        assertThat(created.spec().getPidsLimit()).isEqualTo(1024);
        assertThat(created.spec().getEnvVarsMap()).containsEntry("LANG", "C.UTF-8");
        assertThat(created.clusters()).containsExactly("eu-1");
        assertThat(created.targets("eu-1")).isTrue();
        assertThat(created.targets("us-1")).isFalse();
        assertThat(store.templateStore().get("python")).contains(created);
        assertFails(Reason.CONFLICT, () -> store.templateStore().create(spec("python", 1), List.of()));

        TemplateRecord updated = store.templateStore().update(spec("python", 5), List.of(), created.resourceVersion());
        assertThat(updated.spec().getPoolSize()).isEqualTo(5);
        assertThat(updated.resourceVersion()).isGreaterThan(created.resourceVersion());
        assertThat(updated.targets("us-1")).isTrue();
        assertFails(Reason.CONFLICT, () -> store.templateStore().update(spec("python", 7), List.of(), created.resourceVersion()));
        assertThat(store.template("python").orElseThrow().getPoolSize()).isEqualTo(5);
        assertFails(Reason.NOT_FOUND, () -> store.templateStore().update(spec("ruby", 1), List.of(), null));

        assertFails(Reason.CONFLICT, () -> store.templateStore().delete("python", created.resourceVersion()));
        store.templateStore().delete("python", updated.resourceVersion());
        assertThat(store.templateStore().get("python")).isEmpty();
        assertFails(Reason.NOT_FOUND, () -> store.templateStore().delete("python", null));
        assertThat(store.templates()).extracting(Template::getName).containsExactly("base");
    }

    @Test
    void imagesAreStoredNormalisedWithTheirPidsLimitAndNetwork() {
        TemplateRecord py = store.templateStore().create(spec("py", 1).toBuilder().setImage("python:3.12")
                .setPidsLimit(300).setNetwork("none").build(), List.of());
        assertThat(py.spec().getImage()).isEqualTo("docker.io/library/python:3.12");
        assertThat(py.spec().getPidsLimit()).isEqualTo(300);
        assertThat(py.spec().getNetwork()).isEqualTo("none");
        assertThat(store.template("py").orElseThrow()).isEqualTo(py.spec());

        String digest = "sha256:" + "ab".repeat(32);
        TemplateRecord pinned = store.templateStore().update(py.spec().toBuilder()
                .setImage("127.0.0.1:5000/team/app@" + digest).setPidsLimit(65535).setNetwork("host").build(), List.of(), null);
        assertThat(store.template("py").orElseThrow().getImage()).isEqualTo("127.0.0.1:5000/team/app@" + digest);
        assertThat(store.template("py").orElseThrow().getPidsLimit()).isEqualTo(65535);
        assertThat(store.template("py").orElseThrow().getNetwork()).isEqualTo("host");
        assertThat(store.templateStore().update(pinned.spec().toBuilder().clearImage().build(), List.of(), null)
                .spec().getImage()).isEmpty();
    }

    @Test
    void badTemplatesAreRefused() {
        assertThatThrownBy(() -> store.templateStore().create(spec("t", 1).toBuilder().setImage("Python:3").build(), List.of()))
                .isInstanceOfSatisfying(StoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).startsWith("image: ").contains("'Python'");
                });
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1).toBuilder().setPidsLimit(65536).build(), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1).toBuilder().setPidsLimit(-1).build(), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("Bad Name", 1), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", -1), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1001), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1).toBuilder().setNetwork("bridge").build(), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1).toBuilder().setRuntime("vm").build(), List.of()));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.templateStore().create(spec("t", 1), List.of("Not_A_Cluster")));
        assertThat(store.templateStore().get("t")).isEmpty();
    }

    // ---- clusters ------------------------------------------------------------------------------

    @Test
    void clustersAuthenticateWithTheirTokenWhichIsStoredOnlyAsAHash() throws Exception {
        RegisteredCluster eu = store.clusterStore().register("eu-1", "Frankfurt");
        assertThat(eu.token()).matches("[0-9a-f]{64}");
        assertThat(eu.record().config()).isEqualTo(ClusterConfig.EMPTY);
        assertThat(store.clusterStore().authenticate("eu-1", eu.token())).isTrue();
        assertThat(store.clusterStore().authenticate("eu-1", eu.token() + "0")).isFalse();
        assertThat(store.clusterStore().authenticate("us-1", eu.token())).isFalse();
        assertThat(store.clusterStore().authenticate("eu-1", null)).isFalse();
        assertThat(textValues("clusters")).noneMatch(v -> v.contains(eu.token()));
        assertFails(Reason.CONFLICT, () -> store.clusterStore().register("eu-1", ""));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.clusterStore().register("EU_1", ""));

        RegisteredCluster rotated = store.clusterStore().rotateToken("eu-1");
        assertThat(store.clusterStore().authenticate("eu-1", eu.token())).isFalse();
        assertThat(store.clusterStore().authenticate("eu-1", rotated.token())).isTrue();
        assertFails(Reason.NOT_FOUND, () -> store.clusterStore().rotateToken("us-1"));

        store.clusterStore().delete("eu-1");
        assertThat(store.clusterStore().authenticate("eu-1", rotated.token())).isFalse();
        assertThat(store.clusterStore().list()).isEmpty();
        assertFails(Reason.NOT_FOUND, () -> store.clusterStore().delete("eu-1"));
    }

    @Test
    void clusterConfigIsVersionedAndValidated() {
        ClusterRecord eu = store.clusterStore().register("eu-1", "").record();
        ClusterConfig config = new ClusterConfig(
                List.of(new ClusterConfig.HostAlias("10.0.0.5", List.of("db.internal", "cache.internal")),
                        new ClusterConfig.HostAlias("fd00::1", List.of("v6.internal"))),
                Map.of("registry", "registry.internal:5000"));
        ClusterRecord set = store.clusterStore().setConfig("eu-1", config, eu.configVersion());
        assertThat(set.config()).isEqualTo(config);
        assertThat(set.configVersion()).isGreaterThan(eu.configVersion());
        assertThat(store.clusterStore().get("eu-1").orElseThrow().config()).isEqualTo(config);

        assertFails(Reason.CONFLICT, () -> store.clusterStore().setConfig("eu-1", ClusterConfig.EMPTY, eu.configVersion()));
        assertFails(Reason.NOT_FOUND, () -> store.clusterStore().setConfig("us-1", ClusterConfig.EMPTY, null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.clusterStore().setConfig("eu-1", new ClusterConfig(
                List.of(new ClusterConfig.HostAlias("10.0.0.300", List.of("x"))), Map.of()), null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.clusterStore().setConfig("eu-1", new ClusterConfig(
                List.of(new ClusterConfig.HostAlias("10.0.0.3", List.of("bad host"))), Map.of()), null));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.clusterStore().setConfig("eu-1", new ClusterConfig(
                List.of(new ClusterConfig.HostAlias("10.0.0.3", List.of())), Map.of()), null));
        assertThat(store.clusterStore().get("eu-1").orElseThrow().config()).isEqualTo(config);

        // registry credentials: {"username","password"} under registry.auth.HOST[:PORT]; errors never quote the value
        ClusterConfig creds = new ClusterConfig(List.of(), Map.of("registry.auth.ghcr.io",
                "{\"username\":\"bot\",\"password\":\"s3cret-pw\"}"));
        assertThat(store.clusterStore().setConfig("eu-1", creds, null).config()).isEqualTo(creds);
        for (Map.Entry<String, String> bad : Map.of(
                "registry.auth.ghcr.io", "s3cret-pw",
                "registry.auth.quay.io", "{\"username\":\"bot\"}",
                "registry.auth.docker.io", "{\"username\":\"bot\",\"password\":\"s3cret-pw\",\"token\":1}",
                "registry.auth.bad host", "{\"username\":\"bot\",\"password\":\"s3cret-pw\"}",
                "registry.auth.r.io:99999", "{\"username\":\"bot\",\"password\":\"s3cret-pw\"}").entrySet()) {
            assertThatThrownBy(() -> store.clusterStore().setConfig("eu-1", new ClusterConfig(List.of(),
                    Map.of(bad.getKey(), bad.getValue())), null))
                    .as(bad.toString())
                    .isInstanceOfSatisfying(StoreException.class, e -> {
                        assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("settings." + bad.getKey()).doesNotContain("s3cret");
                    });
        }
    }

    // ---- sandboxes -----------------------------------------------------------------------------

    @Test
    void aCreatedSandboxsRecordLosesToOneAdoptedBeforeItWithoutAnError() {
        io.agentbox.manager.store.ApiStore api = store.writeBehindApi();
        SandboxRecord adopted = new SandboxRecord("adopted00001-local", "local", "base", "t1", Map.of("by", "report"),
                clock.millis(), clock.millis() + 60_000, false, null);
        api.insertSandbox(adopted);
        SandboxRecord created = new SandboxRecord("adopted00001-local", "local", "base", "t1", Map.of("by", "create"),
                clock.millis(), clock.millis() + 60_000, false, null);
        api.insertCreatedSandbox(created); // queued one wins at once
        await().atMost(Duration.ofSeconds(10)).until(() -> store.sandboxStore().get("adopted00001-local").isPresent());
        api.insertCreatedSandbox(created); // committed one wins when the batch is written
        SandboxRecord fresh = new SandboxRecord("created00002-local", "local", "base", "t1", Map.of("by", "create"),
                clock.millis(), clock.millis() + 60_000, false, null);
        api.insertCreatedSandbox(fresh);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.sandboxStore().get("created00002-local").isPresent());
        assertThat(store.sandboxStore().get("adopted00001-local").orElseThrow().metadata()).containsEntry("by", "report");
        assertThat(api.sandbox("created00002-local").orElseThrow().metadata()).containsEntry("by", "create");
        assertFails(Reason.CONFLICT, () -> api.insertSandbox(created));
    }

    @Test
    void writeBehindRecordsAreReadAtOnceAndReachTheStoreInOrder() {
        io.agentbox.manager.store.ApiStore api = store.writeBehindApi();
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            String id = String.format("wb%010d-local", i);
            ids.add(id);
            api.insertSandbox(new SandboxRecord(id, "local", "base", i % 2 == 0 ? "t1" : "t2", Map.of("i", "" + i),
                    clock.millis() + i, clock.millis() + 60_000, false, null));
            if (i % 3 == 0) {
                assertThat(api.markEnded(id, "killed")).isTrue(); // right behind its own insert
            }
        }
        assertFails(Reason.CONFLICT, () -> api.insertSandbox(new SandboxRecord(ids.get(1), "local", "base", "t1", Map.of(),
                clock.millis(), clock.millis() + 1, false, null)));
        assertThat(api.sandbox(ids.get(0)).orElseThrow().ended()).isTrue();
        assertThat(api.markEnded(ids.get(0), "killed")).isFalse();
        assertThat(api.markEnded("nosuchsandbox-local", "killed")).isFalse();
        api.updateEndAt(ids.get(2), clock.millis() + 5);
        List<String> liveT1 = ids.stream().filter(id -> Integer.parseInt(id.substring(2, 12)) % 2 == 0
                && Integer.parseInt(id.substring(2, 12)) % 3 != 0).toList();
        assertThat(api.activeSandboxes("t1")).extracting(SandboxRecord::sandboxId).containsExactlyElementsOf(liveT1);

        store.close(); // flushes every queued write
        store = HubStore.open(config, dataDir, clock);
        assertThat(store.activeSandboxes("t1")).extracting(SandboxRecord::sandboxId).containsExactlyElementsOf(liveT1);
        assertThat(store.activeSandboxes(null)).hasSize(200);
        assertThat(store.sandbox(ids.get(1)).orElseThrow().team()).isEqualTo("t2"); // the duplicate changed nothing
        assertThat(store.sandbox(ids.get(2)).orElseThrow().endAtMs()).isEqualTo(clock.millis() + 5);
        assertThat(store.sandbox(ids.get(3)).orElseThrow().endReason()).isEqualTo("killed");
        assertThat(store.sandboxStore().events(ids.get(3))).extracting(SandboxEvent::event)
                .containsExactly(SandboxEvent.CREATED, SandboxEvent.ENDED);
    }

    @Test
    void sandboxRecordsAndHistory() {
        SandboxRecord r = new SandboxRecord("abcdefghijkl-local", "local", "base", "t1", Map.of("k", "v"),
                clock.millis(), clock.millis() + 300_000, false, null);
        store.insertSandbox(r);
        assertThat(store.sandbox(r.sandboxId())).contains(r);
        assertThat(store.activeSandboxes("t1")).containsExactly(r);
        assertThat(store.activeSandboxes("t2")).isEmpty();
        assertFails(Reason.CONFLICT, () -> store.insertSandbox(r));

        clock.advance(Duration.ofSeconds(10));
        assertThat(store.sandboxStore().updateEndAt(r.sandboxId(), clock.millis() + 600_000)).isTrue();
        clock.advance(Duration.ofSeconds(10));
        assertThat(store.markEnded(r.sandboxId(), "killed")).isTrue();
        assertThat(store.markEnded(r.sandboxId(), "killed")).isFalse();
        assertThat(store.sandboxStore().updateEndAt(r.sandboxId(), clock.millis() + 1)).isFalse();

        SandboxRecord ended = store.sandbox(r.sandboxId()).orElseThrow();
        assertThat(ended.ended()).isTrue();
        assertThat(ended.endReason()).isEqualTo("killed");
        assertThat(ended.endAtMs()).isEqualTo(clock.millis());
        assertThat(store.activeSandboxes("t1")).isEmpty();
        assertThat(store.sandboxStore().history("t1", 10)).containsExactly(ended);
        assertThat(store.sandboxStore().history("t2", 10)).isEmpty();
        assertThat(store.sandboxStore().events(r.sandboxId())).extracting(SandboxEvent::event, SandboxEvent::detail)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("created", ""),
                        org.assertj.core.groups.Tuple.tuple("timeout_set", Long.toString(r.createdAtMs() + 10_000 + 600_000)),
                        org.assertj.core.groups.Tuple.tuple("ended", "killed"));
    }

    @Test
    void aSandboxKeepsItsLifecycleAndIsPausedAndResumedThroughTheStoreAndTheWriteBehind() {
        SandboxLifecycle life = new SandboxLifecycle(true, false, true);
        SandboxRecord r = new SandboxRecord("pausedsandbx-local", "local", "base", "t1", Map.of(), clock.millis(),
                clock.millis() + 60_000, false, null, life, 0);
        store.insertSandbox(r);
        assertThat(store.sandbox(r.sandboxId()).orElseThrow().lifecycle()).isEqualTo(life);
        assertThat(store.sandbox(r.sandboxId()).orElseThrow().paused()).isFalse();

        clock.advance(Duration.ofSeconds(5));
        long pausedAt = clock.millis();
        assertThat(store.markPaused(r.sandboxId(), pausedAt)).isTrue();
        assertThat(store.markPaused(r.sandboxId(), pausedAt)).as("already paused").isFalse();
        SandboxRecord paused = store.sandbox(r.sandboxId()).orElseThrow();
        assertThat(paused.pausedAtMs()).isEqualTo(pausedAt);
        assertThat(paused.endAtMs()).isEqualTo(r.endAtMs());
        assertThat(store.activeSandboxes("t1")).containsExactly(paused);
        assertThat(store.markResumed(r.sandboxId(), clock.millis() + 300_000)).isTrue();
        assertThat(store.markResumed(r.sandboxId(), clock.millis() + 1)).as("not paused").isFalse();
        SandboxRecord resumed = store.sandbox(r.sandboxId()).orElseThrow();
        assertThat(resumed.paused()).isFalse();
        assertThat(resumed.endAtMs()).isEqualTo(clock.millis() + 300_000);
        assertThat(resumed.lifecycle()).as("kept across pause and resume").isEqualTo(life);

        // the write-behind view answers at once and writes the same
        io.agentbox.manager.store.ApiStore api = store.writeBehindApi();
        assertThat(api.markPaused(r.sandboxId(), pausedAt + 1)).isTrue();
        assertThat(api.sandbox(r.sandboxId()).orElseThrow().pausedAtMs()).isEqualTo(pausedAt + 1);
        assertThat(api.markPaused(r.sandboxId(), pausedAt + 2)).isFalse();
        assertThat(api.markEnded(r.sandboxId(), "killed")).isTrue();
        assertThat(api.markResumed(r.sandboxId(), clock.millis() + 1)).as("ended").isFalse();
        store.close();
        store = HubStore.open(config, dataDir, clock);
        SandboxRecord ended = store.sandbox(r.sandboxId()).orElseThrow();
        assertThat(ended.ended()).isTrue();
        assertThat(ended.paused()).as("an ended sandbox is not paused").isFalse();
        assertThat(store.sandboxStore().events(r.sandboxId())).extracting(SandboxEvent::event).containsExactly(
                SandboxEvent.CREATED, SandboxEvent.PAUSED, SandboxEvent.RESUMED, SandboxEvent.PAUSED, SandboxEvent.ENDED);
        SandboxRecord plain = new SandboxRecord("plainsandbox-local", "local", "base", "t1", Map.of(), 0, 1, false, null);
        store.insertSandbox(plain);
        assertThat(store.sandbox(plain.sandboxId()).orElseThrow().lifecycle()).isEqualTo(SandboxLifecycle.KILL);
    }

    @Test
    void historyListsMostRecentlyEndedFirst() {
        for (String id : List.of("aaaaaaaaaaaa-local", "bbbbbbbbbbbb-local", "cccccccccccc-local")) {
            store.insertSandbox(new SandboxRecord(id, "local", "base", "t1", Map.of(), clock.millis(), clock.millis() + 1000, false, null));
        }
        for (String id : List.of("bbbbbbbbbbbb-local", "aaaaaaaaaaaa-local")) {
            clock.advance(Duration.ofSeconds(1));
            store.markEnded(id, "timeout");
        }
        assertThat(store.sandboxStore().history("t1", 10)).extracting(SandboxRecord::sandboxId)
                .containsExactly("aaaaaaaaaaaa-local", "bbbbbbbbbbbb-local");
        assertThat(store.sandboxStore().history("t1", 1)).hasSize(1);
        assertFails(Reason.INVALID_ARGUMENT, () -> store.sandboxStore().history("t1", 0));
    }

    @Test
    void badSandboxRecordsAreRefused() {
        assertFails(Reason.INVALID_ARGUMENT, () -> store.insertSandbox(new SandboxRecord("Not Valid", "local", "base", "t1",
                Map.of(), 0, 0, false, null)));
        assertFails(Reason.INVALID_ARGUMENT, () -> store.insertSandbox(new SandboxRecord("abcdefghijkl-local", "local", "", "t1",
                Map.of(), 0, 0, false, null)));
        assertThat(store.activeSandboxes(null)).isEmpty();
    }

    // ---- resource versions ---------------------------------------------------------------------

    @Test
    void everyChangeGetsTheNextVersionAndIsLoggedInOrder() {
        ChangeLog log = store.changeLog();
        long start = log.currentVersion();
        assertThat(start).isPositive();
        List<Change> heard = new CopyOnWriteArrayList<>();
        log.addListener(heard::add);

        CreatedApiKey key = store.apiKeyStore().create("team-a", "user", "", null);   // team + key
        TemplateRecord t = store.templateStore().create(spec("python", 1), List.of()); // template
        RegisteredCluster c = store.clusterStore().register("eu-1", "");               // cluster + its config
        store.clusterStore().setConfig("eu-1", ClusterConfig.EMPTY, null);            // config
        store.apiKeyStore().revoke(key.record().id());                                 // key delete
        store.templateStore().delete("python", null);                                  // template delete

        assertThat(log.currentVersion()).isEqualTo(start + 8);
        assertThat(store.teamStore().get("team-a").orElseThrow().resourceVersion()).isEqualTo(start + 1);
        assertThat(key.record().resourceVersion()).isEqualTo(start + 2);
        assertThat(t.resourceVersion()).isEqualTo(start + 3);
        assertThat(c.record().resourceVersion()).isEqualTo(start + 4);
        assertThat(c.record().configVersion()).isEqualTo(start + 5);

        assertThat(log.changesSince(Kind.API_KEY, start, 100)).extracting(Change::version, Change::op).containsExactly(
                org.assertj.core.groups.Tuple.tuple(start + 2, Op.UPSERT), org.assertj.core.groups.Tuple.tuple(start + 7, Op.DELETE));
        assertThat(log.changesSince(Kind.API_KEY, start + 2, 100)).extracting(Change::name).containsExactly(key.record().id());
        assertThat(log.changesSince(Kind.TEMPLATE, start, 100)).extracting(Change::name, Change::op).containsExactly(
                org.assertj.core.groups.Tuple.tuple("python", Op.UPSERT), org.assertj.core.groups.Tuple.tuple("python", Op.DELETE));
        assertThat(log.changesSince(Kind.CLUSTER_CONFIG, start, 100)).extracting(Change::version).containsExactly(start + 5, start + 6);
        assertThat(log.changesSince(Kind.TEMPLATE, start, 1)).hasSize(1);
        assertThat(heard).extracting(Change::version).containsExactly(
                start + 1, start + 2, start + 3, start + 4, start + 5, start + 6, start + 7, start + 8);

        // failed writes leave no trace in the version or the log
        assertFails(Reason.CONFLICT, () -> store.clusterStore().register("eu-1", ""));
        assertThat(log.currentVersion()).isEqualTo(start + 8);
        assertThat(heard).hasSize(8);

        assertFails(Reason.INVALID_ARGUMENT, () -> log.changesSince(Kind.TEMPLATE, 0, 0));
    }

    @Test
    void snapshotsCarryTheVersionTheyWereReadAt() {
        store.templateStore().create(spec("python", 1), List.of());
        Snapshot<TemplateRecord> snap = store.templateStore().snapshot();
        assertThat(snap.resourceVersion()).isEqualTo(store.changeLog().currentVersion());
        assertThat(snap.items()).extracting(TemplateRecord::name).containsExactly("base", "python");

        store.clusterStore().register("eu-1", "");
        assertThat(store.clusterStore().snapshot().resourceVersion()).isEqualTo(store.changeLog().currentVersion());
        assertThat(store.templateStore().snapshot().resourceVersion()).isGreaterThan(snap.resourceVersion());
    }

    @Test
    void pruningTellsWatchersHowFarBackTheyCanResume() {
        long start = store.changeLog().currentVersion();
        for (int i = 0; i < 5; i++) {
            store.teamStore().create("team-" + i, "");
        }
        assertThat(store.changeLog().oldestRetained()).isEqualTo(start + 1);
        assertThat(store.changeLog().prune(2)).isEqualTo(3);
        assertThat(store.changeLog().oldestRetained()).isEqualTo(start + 4);
        assertThat(store.changeLog().changesSince(Kind.TEAM, 0, 100)).extracting(Change::version).containsExactly(start + 4, start + 5);
        store.changeLog().prune(0);
        assertThat(store.changeLog().oldestRetained()).isEqualTo(store.changeLog().currentVersion() + 1);
    }

    @Test
    void theLogPrunesItselfOnWrite() {
        store.changeLog().retention(3, 4);
        for (int i = 0; i < 12; i++) {
            store.teamStore().create("team-" + i, "");
        }
        long current = store.changeLog().currentVersion();
        // pruned at the last multiple of 4 down to 3 entries, plus what came after it
        long lastPrune = current - current % 4;
        assertThat(store.changeLog().oldestRetained()).isEqualTo(lastPrune - 2);
        assertThat(store.changeLog().changesSince(Kind.TEAM, 0, 100)).extracting(Change::version)
                .first().isEqualTo(lastPrune - 2);
    }

    @Test
    void endedSandboxesAreForgottenAfterTheirRetention() {
        for (String id : List.of("aaaaaaaaaaaa-local", "bbbbbbbbbbbb-local", "cccccccccccc-local")) {
            store.insertSandbox(new SandboxRecord(id, "local", "base", "t1", Map.of(), clock.millis(), clock.millis() + 1000, false, null));
        }
        store.markEnded("aaaaaaaaaaaa-local", "killed");
        clock.advance(Duration.ofHours(1));
        store.markEnded("bbbbbbbbbbbb-local", "killed");
        assertThat(store.sandboxStore().deleteEndedBefore(clock.millis() - 1)).isEqualTo(1);
        assertThat(store.sandbox("aaaaaaaaaaaa-local")).isEmpty();
        assertThat(store.sandboxStore().events("aaaaaaaaaaaa-local")).isEmpty();
        assertThat(store.sandbox("bbbbbbbbbbbb-local")).isPresent();
        assertThat(store.activeSandboxes("t1")).extracting(SandboxRecord::sandboxId).containsExactly("cccccccccccc-local");
    }

    // ---- concurrency ---------------------------------------------------------------------------

    @Test
    void concurrentWritersGetDistinctGaplessVersions() throws Exception {
        long start = store.changeLog().currentVersion();
        int threads = 8;
        int perThread = 15;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Long>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String team = "team-" + t;
                store.teamStore().create(team, "");
                results.add(pool.submit(() -> {
                    List<Long> versions = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        versions.add(store.apiKeyStore().create(team, "user", "", null).record().resourceVersion());
                    }
                    return versions;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> f : results) {
                List<Long> mine = f.get(60, TimeUnit.SECONDS);
                assertThat(mine).isSorted();
                all.addAll(mine);
            }
            assertThat(all).hasSize(threads * perThread);
            long end = store.changeLog().currentVersion();
            assertThat(end).isEqualTo(start + threads + threads * perThread);
            assertThat(Collections.max(all)).isLessThanOrEqualTo(end);
            assertThat(store.changeLog().changesSince(Kind.API_KEY, start, ChangeLog.MAX_PAGE)).hasSize(threads * perThread);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void snapshotsTakenDuringWritesHoldExactlyTheItemsUpToTheirVersion() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> writer = pool.submit(() -> {
                for (int i = 0; i < 40; i++) {
                    store.templateStore().create(spec("t-" + i, 1), List.of());
                }
                return null;
            });
            List<Snapshot<TemplateRecord>> snapshots = new ArrayList<>();
            while (!writer.isDone()) {
                snapshots.add(store.templateStore().snapshot());
            }
            writer.get();
            snapshots.add(store.templateStore().snapshot());
            List<TemplateRecord> all = store.templateStore().list();
            for (Snapshot<TemplateRecord> snap : snapshots) {
                Set<String> expected = new HashSet<>();
                all.stream().filter(t -> t.resourceVersion() <= snap.resourceVersion()).forEach(t -> expected.add(t.name()));
                Set<String> got = new HashSet<>();
                snap.items().forEach(t -> got.add(t.name()));
                assertThat(got).as("snapshot at version %d", snap.resourceVersion()).isEqualTo(expected);
            }
            assertThat(snapshots.get(snapshots.size() - 1).items()).hasSize(41);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentCreatesOfOneTemplateYieldOneWinnerAndConflicts() throws Exception {
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<String>> tasks = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int size = i + 1;
                tasks.add(() -> {
                    try {
                        store.templateStore().create(spec("race", size), List.of());
                        return "created";
                    } catch (StoreException e) {
                        return e.reason().name();
                    }
                });
            }
            List<String> outcomes = new ArrayList<>();
            for (Future<String> f : pool.invokeAll(tasks, 60, TimeUnit.SECONDS)) {
                outcomes.add(f.get());
            }
            assertThat(outcomes).containsOnly("created", "CONFLICT");
            assertThat(outcomes).filteredOn("created"::equals).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void teamLimitsAreStoredWithDefaultsVersionedAndForgottenWithTheirTeam() {
        store.teamStore().create("quota", "");
        assertThat(store.teamLimitStore().get("quota").limits()).isEqualTo(TeamLimits.NONE);
        assertFails(Reason.NOT_FOUND, () -> store.teamLimitStore().set("ghost", new TeamLimits(1, null)));
        assertFails(Reason.INVALID_ARGUMENT, () -> new TeamLimits(-1, null));
        assertFails(Reason.INVALID_ARGUMENT, () -> new TeamLimits(null, 0.0));

        TeamLimitStore.Stored own = store.teamLimitStore().set("quota", new TeamLimits(3, null));
        TeamLimitStore.Stored defaults = store.teamLimitStore().setDefaults(new TeamLimits(10, 2.5));
        assertThat(defaults.resourceVersion()).isGreaterThan(own.resourceVersion());
        assertThat(store.teamLimitStore().effective("quota")).isEqualTo(new TeamLimits(3, 2.5));
        assertThat(store.teamLimitStore().effective("any-other")).isEqualTo(new TeamLimits(10, 2.5));
        store.teamLimitStore().set("quota", new TeamLimits(null, 0.5)); // replaced: maxSandboxes falls back
        assertThat(store.teamLimitStore().effective("quota")).isEqualTo(new TeamLimits(10, 0.5));
        assertThat(store.changeLog().changesSince(Kind.TEAM_LIMITS, 0, 100)).extracting(Change::name)
                .containsExactly("quota", TeamLimitStore.DEFAULTS, "quota");

        store.teamStore().delete("quota");
        store.teamStore().create("quota", "");
        assertThat(store.teamLimitStore().get("quota").limits()).isEqualTo(TeamLimits.NONE);
    }
}
