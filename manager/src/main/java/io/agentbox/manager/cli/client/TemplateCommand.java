package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox template ls|create|rm}: templates through the hub's native API
 * ({@code /v1/templates}). {@code create} makes a template from an image and, unless
 * {@code --no-wait}, follows its build (the workers' pull of the image) with a progress bar until it
 * is ready or failed. Builds with steps stay on the E2B SDK's {@code Template.build}.
 */
@Command(name = "template", mixinStandardHelpOptions = true,
        description = "List, create (from an image) and remove templates (through the hub's /v1 API).",
        subcommands = {TemplateCommand.Ls.class, TemplateCommand.Create.class, TemplateCommand.Rm.class})
public final class TemplateCommand implements Runnable {
    /** How often a waiting create asks for the build's status. */
    static final Duration POLL = Duration.ofMillis(500);
    /** Build states after which nothing changes any more. */
    static final Set<String> FINAL = Set.of("ready", "error", "failed");
    /** "3/7 layers, 412/1630 MB" as {@code PullProgress.message()} writes it. */
    private static final Pattern MB = Pattern.compile("([0-9.]+)/([0-9.]+) MB");

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: ls, create or rm");
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
            description = "Create a template from an OCI image and wait until its build is ready (progress on stderr).")
    static final class Create implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(index = "0", paramLabel = "NAME", description = "The template's name (its alias).")
        String name;
        @Option(names = {"-i", "--image"}, required = true, paramLabel = "REF", description = "OCI image reference, e.g. python:3.12.")
        String image;
        @Option(names = "--cpu", paramLabel = "N", description = "CPUs per sandbox.")
        Integer cpuCount;
        @Option(names = "--memory-mb", paramLabel = "MB", description = "Memory per sandbox.")
        Integer memoryMb;
        @Option(names = "--disk-size-mb", paramLabel = "MB", description = "Writable layer size per sandbox.")
        Integer diskSizeMb;
        @Option(names = "--network", paramLabel = "MODE", description = "isolated, none or host.")
        String network;
        @Option(names = "--no-wait", description = "Return once the template is created, without following its build.")
        boolean noWait;
        @Option(names = "--wait-timeout", paramLabel = "SECONDS", defaultValue = "900",
                description = "Give up waiting after this long (default: ${DEFAULT-VALUE}); the build goes on.")
        int waitSeconds;

        @Override
        public Integer call() throws InterruptedException {
            ApiClient client = options.client();
            ObjectNode body = ApiClient.MAPPER.createObjectNode().put("name", name).put("image", image);
            if (cpuCount != null) {
                body.put("cpuCount", cpuCount);
            }
            if (memoryMb != null) {
                body.put("memoryMb", memoryMb);
            }
            if (diskSizeMb != null) {
                body.put("diskSizeMb", diskSizeMb);
            }
            if (network != null) {
                body.put("network", network);
            }
            JsonNode t = client.call("POST", "/v1/templates", body);
            String id = t.path("id").asText();
            if (!noWait) {
                t = follow(client, id, t);
            }
            options.output(spec).object(t, id);
            String status = t.path("buildStatus").asText("");
            if (status.equals("error") || status.equals("failed")) {
                spec.commandLine().getErr().println("error: template " + id + " build " + status
                        + (t.path("buildError").isTextual() ? ": " + t.get("buildError").asText() : ""));
                spec.commandLine().getErr().flush();
                return 1;
            }
            return 0;
        }

        private JsonNode follow(ApiClient client, String id, JsonNode t) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
            try (Progress progress = options.progress(spec, "building " + name)) {
                while (t.path("buildStatus").isTextual() && !FINAL.contains(t.get("buildStatus").asText())) {
                    report(progress, t);
                    if (System.nanoTime() > deadline) {
                        throw new ClientException("template " + id + " is still " + t.get("buildStatus").asText()
                                + " after " + waitSeconds + " s; see `agentbox template ls`");
                    }
                    Thread.sleep(POLL.toMillis());
                    t = client.get("/v1/templates/" + ApiClient.enc(id));
                }
                report(progress, t);
            }
            return t;
        }

        /** A bar when the template reports pull progress ("…, 412/1630 MB"), else the status. */
        private static void report(Progress progress, JsonNode t) {
            String status = t.path("buildStatus").asText("ready");
            String detail = t.path("pullProgress").asText("");
            Matcher m = MB.matcher(detail);
            if (m.find()) {
                long done = (long) (Double.parseDouble(m.group(1)) * 1000);
                long total = (long) (Double.parseDouble(m.group(2)) * 1000);
                progress.update(done, total, status + ", " + detail);
            } else {
                progress.status(detail.isEmpty() ? status : status + ", " + detail);
            }
        }
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
