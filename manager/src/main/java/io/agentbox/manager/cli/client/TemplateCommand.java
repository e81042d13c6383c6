package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox template ls|create|builds|logs|rm}: templates through the hub's native API
 * ({@code /v1/templates}). {@code create} builds a template from an image (or a template) with
 * optional steps, through the same machinery as the E2B SDK's {@code Template.build}, and unless
 * {@code --no-wait} follows its build log on stderr until the build is ready (status 0) or failed
 * (status 1, with the build's error).
 */
@Command(name = "template", mixinStandardHelpOptions = true,
        description = "List, build, inspect and remove templates (through the hub's /v1 API).",
        subcommands = {TemplateCommand.Ls.class, TemplateCommand.Create.class, TemplateCommand.Builds.class,
                TemplateCommand.Logs.class, TemplateCommand.Rm.class})
public final class TemplateCommand implements Runnable {
    /** How often a follow asks for more of the build's log when the last answer had none. */
    static final Duration POLL = Duration.ofMillis(500);
    /** Log entries per request while following. */
    static final int LOG_PAGE = 1000;
    /** Build states after which nothing changes any more. */
    static final Set<String> FINAL = Set.of("ready", "error");

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: ls, create, builds, logs or rm");
    }

    static final List<Output.Column> COLUMNS = List.of(
            Output.Column.of("ID", "id"),
            Output.Column.of("ALIASES", "aliases"),
            Output.Column.of("IMAGE", "image"),
            Output.Column.of("CPU", "cpuCount"),
            Output.Column.of("MEMORY_MB", "memoryMb"),
            Output.Column.of("DISK_MB", "diskSizeMb"),
            Output.Column.of("NETWORK", "network"),
            Output.Column.of("STATUS", "buildStatus"),
            Output.Column.of("UPDATED", "updatedAt"));

    static final List<Output.Column> BUILD_COLUMNS = List.of(
            Output.Column.of("BUILD", "buildId"),
            Output.Column.of("STATUS", "status"),
            Output.Column.of("STARTED", "startedAt"),
            Output.Column.of("FINISHED", "finishedAt"),
            Output.Column.of("ERROR", "error"));

    @Command(name = "ls", aliases = "list", mixinStandardHelpOptions = true, description = "List the templates the key can use.")
    static final class Ls implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Override
        public Integer call() {
            options.output(spec).list(options.client().list("/v1/templates"), COLUMNS);
            return 0;
        }
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Build a template from an OCI image (or a template) with optional steps, and follow its build log "
                    + "on stderr until it is ready.",
                    "Steps run in this order: the --env variables, each --run command, then --workdir and --user."})
    static final class Create implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(index = "0", paramLabel = "NAME", description = "The template's name, alias[:tag]; an existing name is built again.")
        String name;
        @Option(names = {"-i", "--image"}, paramLabel = "REF", description = "OCI image reference to start from, e.g. python:3.12.")
        String image;
        @Option(names = "--from-template", paramLabel = "TEMPLATE", description = "A template to start from instead (default: base).")
        String fromTemplate;
        @Option(names = "--env", paramLabel = "KEY=VALUE", description = "A build-time variable for the later steps (repeatable).")
        Map<String, String> env = new LinkedHashMap<>();
        @Option(names = "--run", paramLabel = "CMD", description = "A shell command to run in the image (repeatable, in order).")
        List<String> run = new ArrayList<>();
        @Option(names = "--run-as", paramLabel = "USER", description = "Who runs the --run commands: user (default) or root.")
        String runAs;
        @Option(names = "--workdir", paramLabel = "DIR", description = "The template's working directory.")
        String workdir;
        @Option(names = "--user", paramLabel = "USER", description = "The template's user: user or root.")
        String user;
        @Option(names = "--start-cmd", paramLabel = "CMD", description = "A command started in every sandbox of the template.")
        String startCmd;
        @Option(names = "--ready-cmd", paramLabel = "CMD", description = "Polled until it passes before a sandbox counts as ready.")
        String readyCmd;
        @Option(names = "--cpu", paramLabel = "N", description = "CPUs per sandbox (and per build step).")
        Integer cpuCount;
        @Option(names = "--memory-mb", paramLabel = "MB", description = "Memory per sandbox (and per build step).")
        Integer memoryMb;
        @Option(names = "--force", description = "Run every step again instead of taking it from the worker's step cache.")
        boolean force;
        @Option(names = "--wait", negatable = true, defaultValue = "true", fallbackValue = "true",
                description = "Follow the build until it ends (default); --no-wait returns once it started.")
        boolean wait;
        @Option(names = "--wait-timeout", paramLabel = "SECONDS", defaultValue = "900",
                description = "Give up following after this long (default: ${DEFAULT-VALUE}); the build goes on.")
        int waitSeconds;

        @Override
        public Integer call() throws InterruptedException {
            ApiClient client = options.client();
            JsonNode t = client.call("POST", "/v1/templates", body());
            String id = t.path("id").asText();
            String buildId = t.path("buildId").asText();
            Output out = options.output(spec);
            if (!wait) {
                out.object(t, id);
                return 0;
            }
            JsonNode build = follow(client, spec.commandLine().getErr(), id, buildId, waitSeconds);
            t = client.get("/v1/templates/" + ApiClient.enc(id));
            ((ObjectNode) t).put("buildId", buildId).set("build", build);
            boolean failed = failed(spec, name, build);
            if (!failed || out.json()) { // a table prints the id only for a usable template: ID=$(...) stays empty
                out.object(t, id);
            }
            return failed ? 1 : 0;
        }

        ObjectNode body() {
            ObjectNode body = ApiClient.MAPPER.createObjectNode().put("name", name);
            if (image != null) {
                body.put("image", image);
            }
            if (fromTemplate != null) {
                body.put("fromTemplate", fromTemplate);
            }
            ArrayNode steps = body.putArray("steps");
            if (!env.isEmpty()) {
                ObjectNode vars = steps.addObject().putObject("env");
                env.forEach(vars::put);
            }
            for (String cmd : run) {
                ObjectNode step = steps.addObject().put("run", cmd);
                if (runAs != null) {
                    step.put("user", runAs);
                }
            }
            if (workdir != null) {
                steps.addObject().put("workdir", workdir);
            }
            if (user != null) {
                steps.addObject().put("user", user);
            }
            for (String[] f : new String[][] {{"startCmd", startCmd}, {"readyCmd", readyCmd}}) {
                if (f[1] != null) {
                    body.put(f[0], f[1]);
                }
            }
            if (cpuCount != null) {
                body.put("cpuCount", cpuCount);
            }
            if (memoryMb != null) {
                body.put("memoryMb", memoryMb);
            }
            if (force) {
                body.put("force", true);
            }
            return body;
        }
    }

    @Command(name = "builds", mixinStandardHelpOptions = true, description = "List a template's builds, newest first.")
    static final class Builds implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(index = "0", paramLabel = "TEMPLATE", description = "Template id or name.")
        String template;

        @Override
        public Integer call() {
            options.output(spec).list(options.client().list("/v1/templates/" + ApiClient.enc(template) + "/builds"), BUILD_COLUMNS);
            return 0;
        }
    }

    @Command(name = "logs", mixinStandardHelpOptions = true,
            description = "Print a build's log (default: the template's newest build); --follow waits for more until it ends.")
    static final class Logs implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(index = "0", paramLabel = "TEMPLATE", description = "Template id or name.")
        String template;
        @Parameters(index = "1", arity = "0..1", paramLabel = "BUILD", description = "Build id (default: the newest).")
        String buildId;
        @Option(names = {"-f", "--follow"}, description = "Keep printing until the build ends; status 1 when it failed.")
        boolean followLog;

        @Override
        public Integer call() throws InterruptedException {
            ApiClient client = options.client();
            String base = "/v1/templates/" + ApiClient.enc(template) + "/builds";
            String id = buildId;
            if (id == null) {
                JsonNode page = client.get(base + "?limit=1");
                if (page.path("items").isEmpty()) {
                    throw new ClientException("template " + template + " has no builds");
                }
                id = page.path("items").get(0).path("buildId").asText();
            }
            PrintWriter out = spec.commandLine().getOut();
            if (!followLog) {
                int offset = 0;
                while (true) {
                    JsonNode page = client.get(base + "/" + ApiClient.enc(id) + "/logs?limit=" + LOG_PAGE + "&offset=" + offset);
                    page.path("logs").forEach(l -> out.println(line(l)));
                    offset = page.path("nextOffset").asInt(offset);
                    if (page.path("logs").isEmpty()) {
                        break;
                    }
                }
                out.flush();
                return 0;
            }
            JsonNode build = follow(client, out, template, id, Integer.MAX_VALUE);
            return failed(spec, template, build) ? 1 : 0;
        }
    }

    /**
     * Prints the build's log entries to {@code to} as they arrive (polling the logs route with the
     * offset it answers) until the build is ready or failed and no entry is left.
     *
     * @return the build as it ended
     * @throws ClientException after {@code waitSeconds} without an end (the build goes on)
     */
    static JsonNode follow(ApiClient client, PrintWriter to, String template, String buildId, int waitSeconds)
            throws InterruptedException {
        String path = "/v1/templates/" + ApiClient.enc(template) + "/builds/" + ApiClient.enc(buildId);
        long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
        int offset = 0;
        while (true) {
            JsonNode page = client.get(path + "/logs?limit=" + LOG_PAGE + "&offset=" + offset);
            JsonNode logs = page.path("logs");
            logs.forEach(l -> to.println(line(l)));
            to.flush();
            offset = page.path("nextOffset").asInt(offset + logs.size());
            // every entry is written before the final status: a final status with nothing new is the end
            if (FINAL.contains(page.path("status").asText()) && logs.isEmpty()) {
                return client.get(path);
            }
            if (System.nanoTime() > deadline) {
                throw new ClientException("build " + buildId + " of template " + template + " is still "
                        + page.path("status").asText() + " after " + waitSeconds + " s; follow it with `agentbox template logs "
                        + template + " " + buildId + " --follow`");
            }
            if (logs.isEmpty()) {
                Thread.sleep(POLL.toMillis());
            }
        }
    }

    /** One log entry as a line: {@code [step] message}, with the level for warnings and errors. */
    static String line(JsonNode l) {
        String step = l.path("step").asText("");
        String level = l.path("level").asText("info");
        return (step.isEmpty() ? "" : "[" + step + "] ") + (level.equals("warn") || level.equals("error") ? level + ": " : "")
                + l.path("message").asText("");
    }

    /** Whether {@code build} failed; if so says why on stderr. */
    static boolean failed(CommandLine.Model.CommandSpec spec, String template, JsonNode build) {
        if (!"error".equals(build.path("status").asText())) {
            return false;
        }
        String step = build.path("errorStep").asText("");
        spec.commandLine().getErr().println("error: build " + build.path("buildId").asText() + " of template " + template
                + " failed" + (step.isEmpty() ? "" : " at step " + step) + ": " + build.path("error").asText("unknown error"));
        spec.commandLine().getErr().flush();
        return true;
    }

    @Command(name = "rm", aliases = "delete", mixinStandardHelpOptions = true, description = "Remove templates (their sandboxes keep running).")
    static final class Rm implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(arity = "1..*", paramLabel = "TEMPLATE_ID")
        List<String> ids;

        @Override
        public Integer call() {
            return SandboxCommand.eachId(spec, options, ids, "removed",
                    id -> options.client().delete("/v1/templates/" + ApiClient.enc(id)));
        }
    }
}
