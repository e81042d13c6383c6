package io.agentbox.manager.nativeapi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.nativeapi.V1Client.Res;
import io.agentbox.manager.testing.ApiUnderTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /v1/sandboxes} over real HTTP against the hub's public API with a real worker and real sandboxes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeSandboxesTest {
    ApiUnderTest api;
    V1Client v1;
    String admin;
    String alice;
    String bob;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        v1 = new V1Client(api.base);
        admin = api.adminKey;
        alice = api.store.createApiKey("alice", "user");
        bob = api.store.createApiKey("bob", "user");
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    JsonNode create(String key, String body) throws Exception {
        Res r = v1.call("POST", "/v1/sandboxes", key, body);
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.json();
    }

    static void assertEnvelope(Res r, int status, String code) {
        assertThat(r.status()).as(r.text()).isEqualTo(status);
        assertThat(r.code()).as(r.text()).isEqualTo(code);
        assertThat(r.json().path("error").path("message").asText()).isNotBlank();
        assertThat(r.json().path("error").path("requestId").asText()).isEqualTo(r.requestId()).isNotBlank();
    }

    @Test
    void createGetListTimeoutAndDeleteASandbox() throws Exception {
        JsonNode sbx = create(alice, "{\"template\":\"base\",\"timeoutSeconds\":120,\"metadata\":{\"run\":\"crud\"},"
                + "\"env\":{\"A\":\"1\"}}");
        String id = sbx.get("id").asText();
        assertThat(sbx.get("template").asText()).isEqualTo("base");
        assertThat(sbx.get("team").asText()).isEqualTo("alice");
        assertThat(sbx.get("cluster").asText()).isEqualTo("local");
        assertThat(sbx.get("state").asText()).isEqualTo("running");
        assertThat(sbx.get("envdAccessToken").asText()).isNotBlank();
        assertThat(sbx.get("metadata").get("run").asText()).isEqualTo("crud");
        assertThat(sbx.get("startedAt").asText()).endsWith("Z");

        Res got = v1.call("GET", "/v1/sandboxes/" + id, alice, null);
        assertThat(got.status()).isEqualTo(200);
        assertThat(got.json().get("id").asText()).isEqualTo(id);
        assertThat(got.json().has("envdAccessToken")).as("the token is answered at create only").isFalse();

        Res listed = v1.call("GET", "/v1/sandboxes?metadata=run=crud", alice, null);
        assertThat(listed.status()).isEqualTo(200);
        assertThat(listed.json().get("items")).extracting(n -> n.get("id").asText()).containsExactly(id);
        assertThat(listed.json().get("nextCursor").isNull()).isTrue();
        assertThat(v1.call("GET", "/v1/sandboxes?metadata=run=other", alice, null).json().get("items")).isEmpty();
        assertThat(v1.call("GET", "/v1/sandboxes?template=nope", alice, null).json().get("items")).isEmpty();

        long endBefore = java.time.Instant.parse(got.json().get("endAt").asText()).toEpochMilli();
        assertThat(v1.call("POST", "/v1/sandboxes/" + id + "/timeout", alice, "{\"timeoutSeconds\":3000}").status())
                .isEqualTo(204);
        long endAfter = java.time.Instant.parse(v1.call("GET", "/v1/sandboxes/" + id, alice, null).json()
                .get("endAt").asText()).toEpochMilli();
        assertThat(endAfter).isGreaterThan(endBefore + 2_000_000);
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/timeout", alice, "{}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/timeout", alice, "{\"timeoutSeconds\":0}"), 400, "bad_request");

        assertThat(v1.call("DELETE", "/v1/sandboxes/" + id, alice, null).status()).isEqualTo(204);
        assertEnvelope(v1.call("GET", "/v1/sandboxes/" + id, alice, null), 404, "not_found");
        assertEnvelope(v1.call("DELETE", "/v1/sandboxes/" + id, alice, null), 404, "not_found");
    }

    @Test
    void anotherTeamsSandboxIsNotFoundButAnAdminReachesIt() throws Exception {
        String id = create(alice, "{}").get("id").asText();
        assertEnvelope(v1.call("GET", "/v1/sandboxes/" + id, bob, null), 404, "not_found");
        assertEnvelope(v1.call("DELETE", "/v1/sandboxes/" + id, bob, null), 404, "not_found");
        assertThat(v1.call("GET", "/v1/sandboxes", bob, null).json().get("items")).isEmpty();
        assertEnvelope(v1.call("GET", "/v1/sandboxes?team=alice", bob, null), 403, "forbidden");

        assertThat(v1.call("GET", "/v1/sandboxes/" + id, admin, null).json().get("team").asText()).isEqualTo("alice");
        assertThat(v1.call("GET", "/v1/sandboxes?team=alice", admin, null).json().get("items"))
                .extracting(n -> n.get("id").asText()).contains(id);
        assertThat(v1.call("DELETE", "/v1/sandboxes/" + id, admin, null).status()).isEqualTo(204);
    }

    @Test
    void badRequestsAnswerTheEnvelope() throws Exception {
        assertEnvelope(v1.call("GET", "/v1/sandboxes", null, null), 401, "unauthorized");
        assertEnvelope(v1.call("GET", "/v1/sandboxes", "not-a-key", null), 401, "unauthorized");
        assertEnvelope(v1.call("POST", "/v1/sandboxes", alice, "{\"templat\":\"base\"}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes", alice, "{\"template\":5}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes", alice, "[1]"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes", alice, "{\"template\":\"base\",\"snapshot\":\"x\"}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes", alice, "{\"template\":\"nope\"}"), 404, "not_found");
        assertEnvelope(v1.call("GET", "/v1/sandboxes?limit=0", alice, null), 400, "bad_request");
        assertEnvelope(v1.call("GET", "/v1/sandboxes?state=sleeping", alice, null), 400, "bad_request");
        assertEnvelope(v1.call("GET", "/v1/sandboxes?cursor=bad!", alice, null), 400, "bad_request");
        assertEnvelope(v1.call("GET", "/v1/nothing-here", alice, null), 404, "not_found");
        Res wrongMethod = v1.call("PUT", "/v1/sandboxes", alice, "{}");
        assertEnvelope(wrongMethod, 405, "method_not_allowed");
        assertThat(wrongMethod.headers().firstValue("Allow")).hasValue("GET, POST");
        assertEnvelope(v1.call("GET", "/v1/sandboxes/nope", alice, null), 404, "not_found");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/nope/reset", alice, null), 404, "not_found");
    }

    @Test
    void templatesAreListedAndConfiguredOnesAreNotDeletedHere() throws Exception {
        Res list = v1.call("GET", "/v1/templates", alice, null);
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json().get("items")).anySatisfy(t -> {
            assertThat(t.get("id").asText()).isEqualTo("base");
            assertThat(t.get("kind").asText()).isEqualTo("configured");
            assertThat(t.get("network").asText()).isEqualTo("host");
        });
        assertThat(v1.call("GET", "/v1/templates/base", alice, null).json().get("id").asText()).isEqualTo("base");
        assertEnvelope(v1.call("GET", "/v1/templates/nope", alice, null), 404, "not_found");
        assertEnvelope(v1.call("DELETE", "/v1/templates/base", alice, null), 400, "bad_request");
        assertEnvelope(v1.call("DELETE", "/v1/templates/nope", alice, null), 404, "not_found");
    }

    @Test
    void requestIdsAreEchoedWhenSaneAndGeneratedOtherwise() throws Exception {
        Res echoed = v1.call("GET", "/v1/sandboxes", alice, null, Map.of("X-Request-Id", "trace-42.a:b_c"));
        assertThat(echoed.requestId()).isEqualTo("trace-42.a:b_c");
        Res generated = v1.call("GET", "/v1/sandboxes", alice, null, Map.of("X-Request-Id", "x".repeat(65)));
        assertThat(generated.requestId()).matches("[0-9a-f]{16}");
        Res none = v1.call("GET", "/v1/sandboxes/nope", alice, null);
        assertThat(none.requestId()).matches("[0-9a-f]{16}");
        assertThat(none.json().path("error").path("requestId").asText()).isEqualTo(none.requestId());
        assertThat(v1.call("GET", "/v1/sandboxes", alice, null).requestId()).isNotEqualTo(none.requestId());
        Res errorEcho = v1.call("GET", "/v1/sandboxes/nope", alice, null, Map.of("X-Request-Id", "mine-1"));
        assertThat(errorEcho.json().path("error").path("requestId").asText()).isEqualTo("mine-1");
        // the other surfaces of the port carry it too
        assertThat(api.call("GET", "/sandboxes", alice, null).headers().firstValue("X-Request-Id")).isPresent();
    }

    @Test
    void cursorPagingWalksEverySandboxOnce() throws Exception {
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            made.add(create(bob, "{\"metadata\":{\"paging\":\"yes\"}}").get("id").asText());
        }
        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            Res r = v1.call("GET", "/v1/sandboxes?metadata=paging=yes&limit=2" + (cursor == null ? "" : "&cursor=" + cursor),
                    bob, null);
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            assertThat(r.json().get("items").size()).isLessThanOrEqualTo(2);
            r.json().get("items").forEach(n -> seen.add(n.get("id").asText()));
            cursor = r.json().get("nextCursor").isNull() ? null : r.json().get("nextCursor").asText();
            pages++;
        } while (cursor != null && pages < 10);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactlyInAnyOrderElementsOf(made);
        Set<String> unique = new HashSet<>(seen);
        assertThat(unique).hasSize(5);
        for (String id : made) {
            v1.call("DELETE", "/v1/sandboxes/" + id, bob, null);
        }
    }

    @Test
    void pauseResumeResetAndSnapshot() throws Exception {
        String id = create(alice, "{\"metadata\":{\"run\":\"pause\"}}").get("id").asText();
        assertThat(v1.call("POST", "/v1/sandboxes/" + id + "/pause", alice, null).status()).isEqualTo(204);
        assertThat(v1.call("GET", "/v1/sandboxes/" + id, alice, null).json().get("state").asText()).isEqualTo("paused");
        assertThat(v1.call("GET", "/v1/sandboxes?state=paused&metadata=run=pause", alice, null).json().get("items"))
                .hasSize(1);
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/pause", alice, null), 409, "conflict");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/reset", alice, null), 409, "conflict");
        Res resumed = v1.call("POST", "/v1/sandboxes/" + id + "/resume", alice, "{\"timeoutSeconds\":600}");
        assertThat(resumed.status()).as(resumed.text()).isEqualTo(200);
        assertThat(resumed.json().get("state").asText()).isEqualTo("running");

        Res reset = v1.call("POST", "/v1/sandboxes/" + id + "/reset", alice, null);
        assertThat(reset.status()).as(reset.text()).isEqualTo(200);
        assertThat(reset.json().get("id").asText()).isEqualTo(id);
        assertThat(reset.json().get("envdAccessToken").asText()).isNotBlank();

        Res snap = v1.call("POST", "/v1/sandboxes/" + id + "/snapshots", alice, "{\"name\":\"native-snap\"}");
        assertThat(snap.status()).as(snap.text()).isEqualTo(201);
        assertThat(snap.json().get("id").asText()).isEqualTo("alice/native-snap:default");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/snapshots", alice, "{\"name\":\"Bad Name!\"}"), 400,
                "bad_request");
        // what the hub's template watch would push to the worker: the snapshot's template beside the configured ones
        List<io.agentbox.protocol.v1.Template> templates = new ArrayList<>(api.store.templates());
        api.store.snapshotStore().find("alice", "native-snap", "default")
                .flatMap(s -> api.store.snapshotStore().templateSpec(s.templateName())).ifPresent(templates::add);
        assertThat(templates).hasSize(api.store.templates().size() + 1);
        api.worker.applyTemplates(templates);
        JsonNode fromSnap = create(alice, "{\"snapshot\":\"alice/native-snap:default\"}");
        assertThat(fromSnap.get("snapshotId").asText()).isEqualTo("alice/native-snap:default");
        // the E2B names of the snapshot, never the hub's internal template name
        String internal = api.store.snapshotStore().find("alice", "native-snap", "default").orElseThrow().templateName();
        String fromSnapId = fromSnap.get("id").asText();
        JsonNode got = v1.call("GET", "/v1/sandboxes/" + fromSnapId, alice, null).json();
        assertThat(got.get("template").asText()).isNotEqualTo(internal).isNotBlank();
        assertThat(got.get("templateAlias").asText()).isEqualTo("alice/native-snap:default");
        assertThat(v1.call("GET", "/v1/sandboxes?template=alice%2Fnative-snap%3Adefault", alice, null).json().get("items"))
                .extracting(n -> n.get("id").asText()).containsExactly(fromSnapId);
        assertThat(v1.call("GET", "/v1/sandboxes?template=" + got.get("template").asText(), alice, null).json().get("items"))
                .extracting(n -> n.get("id").asText()).containsExactly(fromSnapId);
        assertThat(v1.call("GET", "/v1/sandboxes?template=" + internal, alice, null).json().get("items")).isEmpty();
        v1.call("DELETE", "/v1/sandboxes/" + fromSnap.get("id").asText(), alice, null);

        Res snaps = v1.call("GET", "/v1/snapshots?limit=1", alice, null);
        assertThat(snaps.json().get("items")).extracting(n -> n.get("id").asText()).containsExactly("alice/native-snap:default");
        assertThat(v1.call("GET", "/v1/snapshots", bob, null).json().get("items")).isEmpty();
        String snapPath = "/v1/snapshots/alice%2Fnative-snap%3Adefault";
        assertThat(v1.call("GET", snapPath, alice, null).json().get("sourceSandbox").asText()).isEqualTo(id);
        assertEnvelope(v1.call("GET", snapPath, bob, null), 404, "not_found");
        assertEnvelope(v1.call("DELETE", snapPath, bob, null), 404, "not_found");
        assertThat(v1.call("DELETE", snapPath, alice, null).status()).isEqualTo(204);
        assertEnvelope(v1.call("DELETE", snapPath, alice, null), 404, "not_found");
        assertThat(v1.call("DELETE", "/v1/sandboxes/" + id, alice, null).status()).isEqualTo(204);
    }
}
