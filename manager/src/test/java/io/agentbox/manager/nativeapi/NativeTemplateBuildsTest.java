package io.agentbox.manager.nativeapi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.BaseTemplate;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.Standalone;
import io.agentbox.manager.nativeapi.V1Client.Res;
import io.agentbox.worker.image.HostToolsImage;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.pool.SandboxPools;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/templates}, the build routes and {@code POST /v1/sandboxes {image}} against a
 * real {@code agentbox standalone}: the worker pulls an image built offline from this host's
 * programs ({@link HostToolsImage}) from Debian's {@code docker-registry} on loopback, runs the
 * steps in real crun sandboxes, and the built template serves sandboxes that run commands.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeTemplateBuildsTest {
    static final List<String> TOOLS = List.of("bash", "sh", "cat", "echo", "pwd", "id", "mkdir", "true");
    static final Duration BUILD_WAIT = Duration.ofMinutes(4);

    LocalRegistry registry;
    Standalone standalone;
    V1Client v1;
    String admin;
    String alice;
    String bob;
    String image;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        registry = LocalRegistry.start();
        TestImages.Image tools = HostToolsImage.build("native/tools:1", TOOLS);
        new RegistryPush(registry).push("native/tools", "1", tools.layers().stream().map(TestImages.Layer::blob).toList(),
                tools.config(), RegistryPush.ManifestKind.OCI);
        image = registry.hostPort() + "/native/tools:1";
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0).withBase(new BaseTemplate("isolated", 0));
        standalone = Standalone.start(config, SandboxPools.DEFAULT_MAX_SANDBOXES, null,
                RegistrySettings.of(List.of(registry.hostPort())), Duration.ofSeconds(60),
                line -> System.out.println("standalone: " + line));
        v1 = new V1Client("http://127.0.0.1:" + standalone.hub().apiPort());
        admin = standalone.hub().newAdminKey().orElseThrow();
        alice = key("alice");
        bob = key("bob");
    }

    @AfterAll
    void stop() {
        if (standalone != null) {
            standalone.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    String key(String team) throws Exception {
        Res r = v1.call("POST", "/v1/keys", admin, "{\"name\":\"t\",\"team\":\"" + team + "\"}");
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        return r.json().get("key").asText();
    }

    JsonNode build(String key, String body) throws Exception {
        Res r = v1.call("POST", "/v1/templates", key, body);
        assertThat(r.status()).as(r.text()).isEqualTo(202);
        assertThat(r.json().get("buildId").asText()).isNotBlank();
        assertThat(r.json().get("build").get("status").asText()).isEqualTo("building");
        return r.json();
    }

    /** A followed build: its final status and every log entry, read page by page with nextOffset. */
    record Followed(String status, List<JsonNode> logs) {
        List<String> messages() {
            return logs.stream().map(l -> l.get("message").asText()).toList();
        }
    }

    Followed follow(String key, String templateId, String buildId) throws Exception {
        List<JsonNode> logs = new ArrayList<>();
        long deadline = System.nanoTime() + BUILD_WAIT.toNanos();
        int offset = 0;
        while (System.nanoTime() < deadline) {
            Res r = v1.call("GET", "/v1/templates/" + templateId + "/builds/" + buildId + "/logs?offset=" + offset + "&limit=5",
                    key, null);
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            JsonNode page = r.json();
            page.get("logs").forEach(logs::add);
            assertThat(page.get("nextOffset").asInt()).isEqualTo(offset + page.get("logs").size());
            offset = page.get("nextOffset").asInt();
            String status = page.get("status").asText();
            if ((status.equals("ready") || status.equals("error")) && page.get("logs").isEmpty()) {
                return new Followed(status, logs);
            }
            if (page.get("logs").isEmpty()) {
                Thread.sleep(200);
            }
        }
        throw new AssertionError("build " + buildId + " did not end within " + BUILD_WAIT + "; log so far: " + logs);
    }

    JsonNode run(String key, String sandboxId, String cmd) throws Exception {
        Res r = v1.call("POST", "/v1/sandboxes/" + sandboxId + "/commands", key, "{\"cmd\":\"" + cmd + "\"}");
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r.json();
    }

    @Test
    void aTemplateFromAnImageIsBuiltFollowedListedAndServesSandboxes() throws Exception {
        JsonNode t = build(alice, "{\"name\":\"tools\",\"image\":\"" + image + "\",\"memoryMb\":512,\"steps\":["
                + "{\"run\":\"mkdir -p /data; echo built-by-run; echo one > /data/marker\",\"user\":\"root\"},"
                + "{\"env\":{\"GREETING\":\"hi\"}},"
                + "{\"run\":\"echo $GREETING-from-env >> /data/marker; echo $(id -un) >> /data/marker\",\"user\":\"root\"},"
                + "{\"workdir\":\"/data\"}]}");
        String id = t.get("id").asText();
        String buildId = t.get("buildId").asText();
        assertThat(t.get("aliases").get(0).asText()).isEqualTo("tools");
        assertThat(t.get("kind").asText()).isEqualTo("built");

        Followed f = follow(alice, id, buildId);
        assertThat(f.status()).as(String.join("\n", f.messages())).isEqualTo("ready");
        assertThat(f.messages()).contains("built-by-run").anyMatch(m -> m.startsWith("FROM " + image));
        assertThat(f.messages().get(f.messages().size() - 1)).as("the last entry comes before the status")
                .contains("is ready");
        assertThat(f.logs()).allSatisfy(l -> {
            assertThat(l.get("timestamp").asText()).endsWith("Z");
            assertThat(l.get("level").asText()).isIn("debug", "info", "warn", "error");
        });

        // the alias names the template on every route; the builds list has this one, finished
        Res builds = v1.call("GET", "/v1/templates/tools/builds", alice, null);
        assertThat(builds.status()).as(builds.text()).isEqualTo(200);
        assertThat(builds.json().get("items")).hasSize(1);
        JsonNode b = builds.json().get("items").get(0);
        assertThat(b.get("buildId").asText()).isEqualTo(buildId);
        assertThat(b.get("status").asText()).isEqualTo("ready");
        assertThat(b.get("finishedAt").asText()).endsWith("Z");
        assertThat(b.get("memoryMb").asInt()).isEqualTo(512);
        assertThat(b.has("error")).isFalse();
        Res one = v1.call("GET", "/v1/templates/" + id + "/builds/" + buildId, alice, null);
        assertThat(one.json().get("logCount").asInt()).isEqualTo(f.logs().size());
        assertThat(v1.call("GET", "/v1/templates/" + id, alice, null).json().get("buildStatus").asText()).isEqualTo("ready");

        // a sandbox of it runs the built files as its final workdir
        Res created = v1.call("POST", "/v1/sandboxes", alice, "{\"template\":\"tools\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String sbx = created.json().get("id").asText();
        JsonNode out = run(alice, sbx, "cat /data/marker; pwd");
        assertThat(out.get("exitCode").asInt()).as(out.toString()).isZero();
        assertThat(out.get("stdout").asText()).isEqualTo("one\nhi-from-env\nroot\n/data\n");
        assertThat(v1.call("DELETE", "/v1/sandboxes/" + sbx, alice, null).status()).isEqualTo(204);

        // another team does not see it; an admin does
        for (String path : List.of("/builds", "/builds/" + buildId, "/builds/" + buildId + "/logs")) {
            NativeSandboxesTest.assertEnvelope(v1.call("GET", "/v1/templates/" + id + path, bob, null), 404, "not_found");
            assertThat(v1.call("GET", "/v1/templates/" + id + path, admin, null).status()).as(path).isEqualTo(200);
        }
        NativeSandboxesTest.assertEnvelope(v1.call("GET", "/v1/templates/tools/builds", bob, null), 404, "not_found");
        NativeSandboxesTest.assertEnvelope(v1.call("GET", "/v1/templates/" + id, bob, null), 404, "not_found");
        assertThat(v1.call("GET", "/v1/templates/" + id, admin, null).json().get("aliases").get(0).asText()).isEqualTo("tools");
        NativeSandboxesTest.assertEnvelope(v1.call("GET", "/v1/templates/" + id + "/builds/nope", alice, null), 404,
                "not_found");

        // the same name again is a new build of the same template, listed first
        JsonNode again = build(alice, "{\"name\":\"tools\",\"image\":\"" + image + "\"}");
        assertThat(again.get("id").asText()).isEqualTo(id);
        assertThat(again.get("buildId").asText()).isNotEqualTo(buildId);
        assertThat(follow(alice, id, again.get("buildId").asText()).status()).isEqualTo("ready");
        assertThat(v1.call("GET", "/v1/templates/" + id + "/builds", alice, null).json().get("items"))
                .extracting(n -> n.get("buildId").asText()).containsExactly(again.get("buildId").asText(), buildId);
        Res paged = v1.call("GET", "/v1/templates/" + id + "/builds?limit=1", alice, null);
        assertThat(paged.json().get("items")).hasSize(1);
        assertThat(paged.json().get("nextCursor").asText()).isNotBlank();

        // a configured template has no builds
        assertThat(v1.call("GET", "/v1/templates/base/builds", alice, null).json().get("items")).isEmpty();

        // another team cannot delete it (404, as if it did not exist); an admin can
        NativeSandboxesTest.assertEnvelope(v1.call("DELETE", "/v1/templates/" + id, bob, null), 404, "not_found");
        assertThat(v1.call("DELETE", "/v1/templates/" + id, admin, null).status()).isEqualTo(204);
        NativeSandboxesTest.assertEnvelope(v1.call("GET", "/v1/templates/" + id + "/builds", alice, null), 404, "not_found");
    }

    @Test
    void aFailingRunStepEndsTheBuildWithItsErrorAndLog() throws Exception {
        JsonNode t = build(alice, "{\"name\":\"broken\",\"image\":\"" + image + "\",\"steps\":[{\"run\":\"true\"},"
                + "{\"run\":\"echo about-to-fail; exit 3\"}]}");
        Followed f = follow(alice, t.get("id").asText(), t.get("buildId").asText());
        assertThat(f.status()).isEqualTo("error");
        assertThat(f.messages()).contains("about-to-fail");
        JsonNode b = v1.call("GET", "/v1/templates/broken/builds/" + t.get("buildId").asText(), alice, null).json();
        assertThat(b.get("status").asText()).isEqualTo("error");
        assertThat(b.get("error").asText()).contains("exit status 3");
        assertThat(b.get("errorStep").asText()).isEqualTo("2");
        assertThat(b.get("finishedAt").asText()).endsWith("Z");
        // no ready build: a sandbox of it is refused, saying why
        Res refused = v1.call("POST", "/v1/sandboxes", alice, "{\"template\":\"broken\"}");
        assertThat(refused.status()).as(refused.text()).isEqualTo(404);
        assertThat(refused.json().path("error").path("message").asText()).contains("exit status 3");
    }

    @Test
    void aSandboxFromAnImageBuildsItsTemplateOnceAndReusesIt() throws Exception {
        Res first = v1.call("POST", "/v1/sandboxes", bob, "{\"image\":\"" + image + "\",\"metadata\":{\"from\":\"image\"}}");
        assertThat(first.status()).as(first.text()).isEqualTo(201);
        assertThat(first.json().get("image").asText()).isEqualTo(image);
        String templateId = first.json().get("template").asText();
        assertThat(first.json().get("templateAlias").asText()).startsWith("image-");
        JsonNode out = run(bob, first.json().get("id").asText(), "echo hello-$(id -un)");
        assertThat(out.get("stdout").asText()).isEqualTo("hello-user\n");

        Res second = v1.call("POST", "/v1/sandboxes", bob, "{\"image\":\"" + image + "\"}");
        assertThat(second.status()).as(second.text()).isEqualTo(201);
        assertThat(second.json().get("template").asText()).isEqualTo(templateId);
        assertThat(v1.call("GET", "/v1/templates/" + templateId + "/builds", bob, null).json().get("items")).hasSize(1);
        for (Res r : List.of(first, second)) {
            v1.call("DELETE", "/v1/sandboxes/" + r.json().get("id").asText(), bob, null);
        }

        NativeSandboxesTest.assertEnvelope(v1.call("POST", "/v1/sandboxes", bob, "{\"image\":\"Not A Ref!\"}"), 400,
                "bad_request");
        NativeSandboxesTest.assertEnvelope(v1.call("POST", "/v1/sandboxes", bob, "{\"image\":\"" + image
                + "\",\"template\":\"base\"}"), 400, "bad_request");
        Res unpullable = v1.call("POST", "/v1/sandboxes", bob, "{\"image\":\"" + registry.hostPort() + "/native/none:1\"}");
        NativeSandboxesTest.assertEnvelope(unpullable, 400, "bad_request");
        assertThat(unpullable.json().path("error").path("message").asText())
                .contains("cannot get the base image").contains("/logs");
    }

    @Test
    void badBuildRequestsAreRefusedBeforeAnythingIsBuilt() throws Exception {
        String[][] cases = {
                {"{}", "400"},
                {"{\"name\":\"x\",\"image\":\"" + image + "\",\"fromTemplate\":\"base\"}", "400"},
                {"{\"name\":\"x\",\"image\":\"Bad Ref\"}", "400"},
                {"{\"name\":\"x\",\"steps\":[{\"run\":\"a\",\"env\":{\"A\":\"1\"}}]}", "400"},
                {"{\"name\":\"x\",\"steps\":[{\"user\":\"bob\"}]}", "400"},
                {"{\"name\":\"x\",\"steps\":[{}]}", "400"},
                {"{\"name\":\"x\",\"steps\":[{\"env\":{\"1A\":\"x\"}}]}", "400"},
                {"{\"name\":\"x\",\"steps\":[{\"copy\":\"a\"}]}", "400"},
                {"{\"name\":\"x\",\"cpuCount\":0}", "400"},
                {"{\"name\":\"x\",\"memoryMb\":64}", "400"},
                {"{\"name\":\"Bad Name\"}", "400"},
                {"{\"name\":\"x\",\"fromTemplate\":\"nope\"}", "400"},
                {"{\"name\":\"base\"}", "409"},
        };
        for (String[] c : cases) {
            Res r = v1.call("POST", "/v1/templates", alice, c[0]);
            assertThat(r.status()).as(c[0] + " -> " + r.text()).isEqualTo(Integer.parseInt(c[1]));
            assertThat(r.json().path("error").path("message").asText()).as(c[0]).isNotBlank();
        }
        assertThat(v1.call("GET", "/v1/templates/x", alice, null).status()).as("nothing was recorded").isEqualTo(404);
    }
}
