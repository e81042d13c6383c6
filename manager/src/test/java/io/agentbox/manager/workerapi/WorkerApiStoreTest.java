package io.agentbox.manager.workerapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.StoreException;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.sync.WatchReplica;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerApiStoreTest {

    private final WatchReplica<ApiKey> keys = new WatchReplica<>("api-keys", ApiKey::getKeyHash);
    private final WatchReplica<Template> templates = new WatchReplica<>("templates", Template::getName);
    private final WorkerApiStore store = new WorkerApiStore(keys, templates,
            Clock.fixed(Instant.ofEpochMilli(10_000), ZoneOffset.UTC));

    @Test
    void keysComeFromTheReplicaAndExpiredOrRevokedOnesFail() {
        keys.apply(EventType.EVENT_TYPE_SNAPSHOT, 5, List.of(
                ApiKey.newBuilder().setKeyHash(ApiKeys.hash("e2b_live")).setTeam("t1").setRole("user").build(),
                ApiKey.newBuilder().setKeyHash(ApiKeys.hash("e2b_old")).setTeam("t1").setRole("user").setExpiresAtMs(10_000).build()));
        assertThat(store.authenticate("e2b_live")).contains(new Principal("t1", "user"));
        assertThat(store.authenticate("e2b_old")).as("expired at the clock's now").isEmpty();
        assertThat(store.authenticate("e2b_unknown")).isEmpty();
        assertThat(store.authenticate("")).isEmpty();
        keys.apply(EventType.EVENT_TYPE_DELETE, 6, List.of(ApiKey.newBuilder().setKeyHash(ApiKeys.hash("e2b_live")).build()));
        assertThat(store.authenticate("e2b_live")).isEmpty();
    }

    @Test
    void sandboxRecordsLiveUntilTheirSandboxEnds() {
        templates.apply(EventType.EVENT_TYPE_SNAPSHOT, 1, List.of(Template.newBuilder().setName("base").build()));
        assertThat(store.template("base")).isPresent();
        SandboxRecord r = new SandboxRecord("abcdefabcdef-w1", "w1", "base", "t1", Map.of(), 1, 100, false, null);
        store.insertSandbox(r);
        assertThatThrownBy(() -> store.insertSandbox(r)).isInstanceOf(StoreException.class);
        store.updateEndAt(r.sandboxId(), 500);
        assertThat(store.sandbox(r.sandboxId()).orElseThrow().endAtMs()).isEqualTo(500);
        assertThat(store.activeSandboxes("t1")).hasSize(1);
        assertThat(store.activeSandboxes("t2")).isEmpty();
        assertThat(store.markEnded(r.sandboxId(), "killed")).isTrue();
        assertThat(store.markEnded(r.sandboxId(), "killed")).isFalse();
        assertThat(store.sandbox(r.sandboxId())).isEmpty();
        assertThat(store.secret("x")).hasSize(32).isEqualTo(store.secret("x"));
    }
}
