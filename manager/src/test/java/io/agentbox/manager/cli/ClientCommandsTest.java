package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.BaseTemplate;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.Standalone;
import io.agentbox.manager.http.Json;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.pool.SandboxPools;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The client commands run in-process ({@link AgentboxCommand#commandLine}) against a real
 * {@code agentbox standalone}: the hub's public API, a local worker over a real loopback tunnel,
 * real crun sandboxes; beside it Debian's {@code docker-registry} on loopback for pulls. The hub
 * and key come from the environment given to the command line ({@code AGENTBOX_URL},
 * {@code AGENTBOX_API_KEY}), {@code HOME} points at an empty directory (no config file).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientCommandsTest {
    Path dir;
    LocalRegistry registry;
    Standalone standalone;
    String url;
    String admin;
    String image;

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        dir = tmp;
        registry = LocalRegistry.start();
        TestImages.Image busybox = TestImages.busybox("cli/busybox:1");
        new RegistryPush(registry).push("cli/busybox", "1", busybox.layers().stream().map(TestImages.Layer::blob).toList(),
                busybox.config(), RegistryPush.ManifestKind.OCI);
        image = registry.hostPort() + "/cli/busybox:1";
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withApi("127.0.0.1", 0)
                .withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0).withBase(new BaseTemplate("isolated", 0));
        standalone = Standalone.start(config, SandboxPools.DEFAULT_MAX_SANDBOXES, null,
                RegistrySettings.of(List.of(registry.hostPort())), Duration.ofSeconds(60),
                line -> System.out.println("standalone: " + line));
        url = "http://127.0.0.1:" + standalone.hub().apiPort();
        admin = standalone.hub().newAdminKey().orElseThrow();
        Files.createDirectories(dir.resolve("home"));
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

    /** What a command printed and returned. */
    record Run(int code, String out, String err) {
        JsonNode json() throws Exception {
            return Json.MAPPER.readTree(out);
        }
    }

    Run run(String key, String... args) {
        return run(Map.of("AGENTBOX_URL", url, "AGENTBOX_API_KEY", key), new StringWriter(), args);
    }

    Run run(Map<String, String> vars, Writer out, String... args) {
        Map<String, String> env = new HashMap<>(vars);
        env.put("HOME", dir.resolve("home").toString());
        StringWriter err = new StringWriter();
        CommandLine cli = AgentboxCommand.commandLine(env::get, false);
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void createListExecCopyAndKillASandbox() throws Exception {
        Run created = run(admin, "sandbox", "create", "--metadata", "run=cli", "--timeout", "300");
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();
        assertThat(id).matches("[a-z0-9-]+");

        Run table = run(admin, "sandbox", "ls", "--metadata", "run=cli");
        assertThat(table.code()).as(table.err()).isZero();
        List<String> lines = table.out().lines().toList();
        assertThat(lines.get(0)).startsWith("ID").contains("TEMPLATE", "STATE", "CLUSTER", "STARTED", "ENDS");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).startsWith(id).contains("base", "running", "local", "run=cli");

        Run json = run(admin, "sandbox", "ls", "--output", "json");
        assertThat(json.code()).as(json.err()).isZero();
        assertThat(json.json().isArray()).isTrue();
        assertThat(json.json()).anySatisfy(s -> {
            assertThat(s.get("id").asText()).isEqualTo(id);
            assertThat(s.get("metadata").get("run").asText()).isEqualTo("cli");
        });

        // exec streams: "first" is written while the command still sleeps; stderr apart; its exit code
        TimedWriter out = new TimedWriter("first");
        long started = System.nanoTime();
        Run exec = run(Map.of("AGENTBOX_URL", url, "AGENTBOX_API_KEY", admin), out,
                "sandbox", "exec", id, "--", "echo first; sleep 2; echo second; echo oops >&2; exit 7");
        long ended = System.nanoTime();
        assertThat(exec.code()).as(exec.err()).isEqualTo(7);
        assertThat(exec.out()).isEqualTo("first\nsecond\n");
        assertThat(exec.err()).isEqualTo("oops\n");
        assertThat(Duration.ofNanos(ended - out.seenAt).toMillis()).as("first line arrived before the command ended")
                .isGreaterThan(1500);
        assertThat(started).isLessThan(out.seenAt);

        Run argv = run(admin, "sandbox", "exec", id, "--output", "json", "--", "printf", "%s|", "$HOME", "a b");
        assertThat(argv.code()).as(argv.err()).isZero();
        assertThat(argv.json().get("stdout").asText()).isEqualTo("$HOME|a b|");
        assertThat(argv.json().get("exitCode").asInt()).isZero();

        // cp both ways, bytes equal
        byte[] bytes = new byte[300_000];
        new Random(16).nextBytes(bytes);
        Path up = dir.resolve("up.bin");
        Files.write(up, bytes);
        Run put = run(admin, "sandbox", "cp", up.toString(), id + ":/tmp/cli/");
        assertThat(put.code()).as(put.err()).isZero();
        assertThat(put.out()).contains("copied 300000 bytes to " + id + ":/tmp/cli/up.bin");
        Run size = run(admin, "sandbox", "exec", id, "stat -c %s /tmp/cli/up.bin");
        assertThat(size.out().strip()).isEqualTo("300000");
        Path downDir = Files.createDirectories(dir.resolve("down"));
        Run get = run(admin, "sandbox", "cp", id + ":/tmp/cli/up.bin", downDir.toString());
        assertThat(get.code()).as(get.err()).isZero();
        assertThat(Files.readAllBytes(downDir.resolve("up.bin"))).isEqualTo(bytes);
        assertThat(downDir.toFile().list()).as("no partial file left").containsExactly("up.bin");
        Run missing = run(admin, "sandbox", "cp", id + ":/tmp/cli/nope", downDir.resolve("nope").toString());
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).startsWith("error: ").contains("(request id ");
        assertThat(downDir.toFile().list()).containsExactly("up.bin");

        Run kill = run(admin, "sandbox", "kill", id);
        assertThat(kill.code()).as(kill.err()).isZero();
        assertThat(kill.out()).isEqualTo("killed " + id + "\n");
        assertThat(run(admin, "sandbox", "ls", "--metadata", "run=cli").out().lines()).hasSize(1);
        Run again = run(admin, "sandbox", "kill", id);
        assertThat(again.code()).isEqualTo(1);
        assertThat(again.err()).startsWith("error: " + id + ": ").contains("not found").contains("(request id ");
    }

    @Test
    void execPassesStdinAndCpCopiesDirectoryTrees() throws Exception {
        Run created = run(admin, "sandbox", "create", "--metadata", "run=cli-tree", "--timeout", "300");
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();

        // -i: stdin reaches the command, in several chunks (300 KB > one 64 KiB call), then end of file
        byte[] input = ("hello stdin\n" + "x".repeat(300_000) + "\n").getBytes(StandardCharsets.UTF_8);
        InputStream before = System.in;
        Run piped;
        try {
            System.setIn(new ByteArrayInputStream(input));
            piped = run(admin, "sandbox", "exec", "-i", id, "--", "head -c 11 | tr a-z A-Z; echo; cat >/dev/null; echo done");
        } finally {
            System.setIn(before);
        }
        assertThat(piped.code()).as(piped.err()).isZero();
        assertThat(piped.out()).isEqualTo("HELLO STDIN\ndone\n");
        try {
            System.setIn(new ByteArrayInputStream(input));
            piped = run(admin, "sandbox", "exec", "-i", id, "--", "wc -c");
        } finally {
            System.setIn(before);
        }
        assertThat(piped.out().strip()).isEqualTo(String.valueOf(input.length));
        Run jsonStdin = run(admin, "sandbox", "exec", "-i", "--output", "json", id, "--", "cat");
        assertThat(jsonStdin.code()).isEqualTo(2);
        assertThat(jsonStdin.err()).contains("cannot be combined with --output json");

        // cp -r up: a tree with a nested empty directory; without -r it is refused
        Path tree = Files.createDirectories(dir.resolve("tree/a/b"));
        Files.createDirectories(dir.resolve("tree/empty"));
        Files.writeString(dir.resolve("tree/top.txt"), "top");
        Files.write(tree.resolve("deep.bin"), new byte[70_000]);
        Run refused = run(admin, "sandbox", "cp", dir.resolve("tree").toString(), id + ":/tmp/");
        assertThat(refused.code()).isEqualTo(1);
        assertThat(refused.err()).contains("is a directory; add -r");
        Run up = run(admin, "sandbox", "cp", "-r", dir.resolve("tree").toString(), id + ":/tmp/");
        assertThat(up.code()).as(up.err()).isZero();
        assertThat(up.out()).contains("copied 2 files, 4 directories, 70003 bytes to " + id + ":/tmp/tree");
        Run listing = run(admin, "sandbox", "exec", id, "cd /tmp/tree && find . | sort && cat top.txt && stat -c %s a/b/deep.bin");
        assertThat(listing.out()).isEqualTo(".\n./a\n./a/b\n./a/b/deep.bin\n./empty\n./top.txt\ntop70000\n");

        // cp -r down into a directory that does not exist yet; a symlink is skipped and counted
        assertThat(run(admin, "sandbox", "exec", id, "ln -s top.txt /tmp/tree/link").code()).isZero();
        Path back = dir.resolve("back");
        Run down = run(admin, "sandbox", "cp", "-r", id + ":/tmp/tree/", back.toString());
        assertThat(down.code()).as(down.err()).isZero();
        assertThat(down.out()).isEqualTo("copied 2 files, 4 directories, 70003 bytes to " + back
                + "; skipped 1 symbolic links or special files\n");
        assertThat(Files.readString(back.resolve("top.txt"))).isEqualTo("top");
        assertThat(Files.size(back.resolve("a/b/deep.bin"))).isEqualTo(70_000);
        assertThat(back.resolve("empty")).isDirectory();
        assertThat(back.resolve("link")).doesNotExist();

        assertThat(run(admin, "sandbox", "kill", id).code()).isZero();
    }

    @Test
    void errorsNameWhatIsMissingOrWrongWithTheRequestId() {
        Run noUrl = run(Map.of(), new StringWriter(), "sandbox", "ls");
        assertThat(noUrl.code()).isEqualTo(1);
        assertThat(noUrl.err()).startsWith("error: no hub URL: pass --url, set AGENTBOX_URL (or E2B_API_URL)");
        Run noKey = run(Map.of("E2B_API_URL", url), new StringWriter(), "sandbox", "ls");
        assertThat(noKey.err()).startsWith("error: no API key");

        Run badKey = run("e2b_not_a_key", "sandbox", "ls");
        assertThat(badKey.code()).isEqualTo(1);
        assertThat(badKey.err()).matches("error: invalid API key \\(request id [^)]+\\)\\n");

        // a flag beats the environment: the bad key in the environment is not used
        Run flag = run(Map.of("AGENTBOX_URL", "http://127.0.0.1:1", "AGENTBOX_API_KEY", "bad"), new StringWriter(),
                "sandbox", "ls", "--url", url, "--api-key", admin);
        assertThat(flag.code()).as(flag.err()).isZero();

        Run unknown = run(admin, "sandbox", "exec", "nosuchsandbox", "true");
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).contains("nosuchsandbox").contains("(request id ");

        Run usage = run(admin, "sandbox", "ls", "--output", "yaml");
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.err()).contains("--output").contains("table, json");
    }

    @Test
    void templateCreateFollowsTheBuildLogAndAFailedBuildExitsWithItsError() throws Exception {
        Run created = run(admin, "template", "create", "cli-tpl", "--image", image, "--run", "echo cli-step-$((6*7))",
                "--run", "mkdir -p /tmp/w", "--workdir", "/tmp/w", "--memory-mb", "256", "--output", "json");
        assertThat(created.code()).as(created.err()).isZero();
        // the build's log, followed on stderr in order: the pull, then the steps' output
        assertThat(created.err()).contains("[base] FROM " + image).contains("[1] cli-step-42");
        assertThat(created.err().indexOf("[base] FROM")).isLessThan(created.err().indexOf("[1] cli-step-42"));
        JsonNode t = created.json();
        assertThat(t.get("aliases").get(0).asText()).isEqualTo("cli-tpl");
        assertThat(t.get("buildStatus").asText()).isEqualTo("ready");
        assertThat(t.get("build").get("status").asText()).isEqualTo("ready");
        String buildId = t.get("buildId").asText();

        Run builds = run(admin, "template", "builds", "cli-tpl");
        assertThat(builds.code()).as(builds.err()).isZero();
        List<String> lines = builds.out().lines().toList();
        assertThat(lines.get(0)).startsWith("BUILD").contains("STATUS", "STARTED", "FINISHED", "ERROR");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).startsWith(buildId).contains("ready");
        Run logs = run(admin, "template", "logs", "cli-tpl");
        assertThat(logs.code()).as(logs.err()).isZero();
        assertThat(logs.out()).contains("[1] cli-step-42").contains("is ready");

        Run failed = run(admin, "template", "create", "cli-bad", "--image", image, "--run", "echo before-failure; exit 4");
        assertThat(failed.code()).isEqualTo(1);
        assertThat(failed.err()).contains("[1] before-failure")
                .containsPattern("error: build [0-9a-f-]+ of template cli-bad failed at step 1: .*exit status 4");
        assertThat(failed.out()).as("no id on stdout for a failed build: ID=$(...) stays empty").isEmpty();
        Run followFailed = run(admin, "template", "logs", "cli-bad", "--follow");
        assertThat(followFailed.code()).isEqualTo(1);
        assertThat(followFailed.out()).contains("[1] before-failure");

        Run badRef = run(admin, "template", "create", "cli-x", "--image", "Not A Ref");
        assertThat(badRef.code()).isEqualTo(1);
        assertThat(badRef.err()).startsWith("error: ").contains("image").contains("(request id ");
    }

    @Test
    void templatesAreListedAndAnUnknownOneIsNotRemoved() throws Exception {
        Run ls = run(admin, "template", "ls");
        assertThat(ls.code()).as(ls.err()).isZero();
        assertThat(ls.out().lines()).anySatisfy(l -> assertThat(l).startsWith("base")); // the header row starts with ID
        Run json = run(admin, "template", "ls", "--output", "json");
        assertThat(json.code()).as(json.err()).isZero();
        assertThat(json.json().findValuesAsText("id")).contains("base");

        Run rm = run(admin, "template", "rm", "nope-" + System.nanoTime());
        assertThat(rm.code()).isEqualTo(1);
        assertThat(rm.err()).startsWith("error: ").contains("(request id ");
    }

    @Test
    void keysAreCreatedListedAndRevokedByAnAdmin() throws Exception {
        Run created = run(admin, "key", "create", "ci-bot", "--team", "cli-team", "--output", "json");
        assertThat(created.code()).as(created.err()).isZero();
        String key = created.json().get("key").asText();
        String id = created.json().get("id").asText();

        Run ls = run(admin, "key", "ls");
        assertThat(ls.out().lines().findFirst().orElseThrow()).endsWith("REVOKED");
        assertThat(ls.out().lines()).anySatisfy(l -> assertThat(l).startsWith(id).contains("ci-bot", "cli-team").endsWith("-"));
        assertThat(ls.out()).doesNotContain(key);

        assertThat(run(key, "sandbox", "ls").code()).as("the new key works").isZero();
        Run notAdmin = run(key, "key", "ls");
        assertThat(notAdmin.code()).isEqualTo(1);
        assertThat(notAdmin.err()).startsWith("error: ").contains("(request id ");

        Run revoked = run(admin, "key", "revoke", id);
        assertThat(revoked.code()).as(revoked.err()).isZero();
        assertThat(revoked.out()).isEqualTo("revoked " + id + "\n");
        assertThat(run(key, "sandbox", "ls").err()).startsWith("error: invalid API key");
        assertThat(run(admin, "key", "ls").out().lines()).as("a revoked key says when")
                .anySatisfy(l -> assertThat(l).startsWith(id).matches(".*\\d{4}-\\d\\d-\\d\\dT\\S+Z$"));
    }

    @Test
    void imagesArePulledIntoAndListedFromTheLocalStore() throws Exception {
        Path data = Files.createDirectory(dir.resolve("image-worker"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        Run pull = run(Map.of(), new StringWriter(), "image", "pull", image, "--data-dir", data.toString(),
                "--insecure-registry", registry.hostPort());
        assertThat(pull.code()).as(pull.err()).isZero();
        assertThat(pull.out()).startsWith(image + " sha256:");
        assertThat(pull.err()).contains("pulling " + image + ": 0/1 layers").contains("pulling " + image + ": 1/1 layers");

        Run ls = run(Map.of(), new StringWriter(), "image", "ls", "--data-dir", data.toString(), "--output", "json");
        assertThat(ls.code()).as(ls.err()).isZero();
        assertThat(ls.json()).anySatisfy(i -> assertThat(i.get("reference").asText()).isEqualTo(image));

        Run refused = run(Map.of(), new StringWriter(), "image", "pull", registry.hostPort() + "/cli/none:1",
                "--data-dir", data.toString(), "--insecure-registry", registry.hostPort());
        assertThat(refused.code()).isEqualTo(1);
        assertThat(refused.err()).contains("pull failed").contains("cli/none");
    }

    /** A writer that notes when {@code marker} first appeared in what was written. */
    static final class TimedWriter extends StringWriter {
        private final String marker;
        volatile long seenAt;

        TimedWriter(String marker) {
            this.marker = marker;
        }

        @Override
        public void flush() {
            if (seenAt == 0 && toString().contains(marker)) {
                seenAt = System.nanoTime();
            }
        }
    }
}
