package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox sandbox create|ls|exec|cp|kill}: sandboxes through the hub's native API
 * ({@code /v1/sandboxes}, docs/cli.md).
 */
@Command(name = "sandbox", mixinStandardHelpOptions = true,
        description = "Create, list, run commands in, copy files to and from, and kill sandboxes (through the hub's /v1 API).",
        subcommands = {SandboxCommand.Create.class, SandboxCommand.Ls.class, ExecCommand.class, CpCommand.class,
                SandboxCommand.Kill.class})
public final class SandboxCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: create, ls, exec, cp or kill");
    }

    /** Table columns of a sandbox. */
    static final List<Output.Column> COLUMNS = List.of(
            Output.Column.of("ID", "id"),
            new Output.Column("TEMPLATE", n -> Output.text(n.has("templateAlias") ? n.get("templateAlias") : n.get("template"))),
            Output.Column.of("STATE", "state"),
            Output.Column.of("CLUSTER", "cluster"),
            Output.Column.of("TEAM", "team"),
            Output.Column.of("STARTED", "startedAt"),
            Output.Column.of("ENDS", "endAt"),
            Output.Column.of("METADATA", "metadata"));

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = "Create a sandbox from a template (default base), a snapshot or an image; prints its id "
                    + "(--output json: the sandbox, with its envd access token).")
    static final class Create implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Option(names = {"-t", "--template"}, paramLabel = "TEMPLATE", description = "Template id or alias (default: base).")
        String template;
        @Option(names = "--snapshot", paramLabel = "SNAPSHOT", description = "Start from this snapshot instead of a template.")
        String snapshot;
        @Option(names = {"-i", "--image"}, paramLabel = "REF", description = "Start from this OCI image (the hub builds its template "
                + "on first use and reuses it).")
        String image;
        @Option(names = "--timeout", paramLabel = "SECONDS", description = "Seconds until the sandbox is killed (the hub's default when absent).")
        Integer timeoutSeconds;
        @Option(names = {"-e", "--env"}, paramLabel = "NAME=VALUE", description = "Environment variable of the sandbox's commands (repeatable).")
        Map<String, String> env = new LinkedHashMap<>();
        @Option(names = {"-m", "--metadata"}, paramLabel = "KEY=VALUE", description = "Metadata to list and filter by (repeatable).")
        Map<String, String> metadata = new LinkedHashMap<>();
        @Option(names = "--cluster", paramLabel = "CLUSTER", description = "Create on this worker cluster.")
        String cluster;

        @Override
        public Integer call() {
            if ((template != null ? 1 : 0) + (snapshot != null ? 1 : 0) + (image != null ? 1 : 0) > 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "give one of --template, --snapshot and --image");
            }
            ObjectNode body = ApiClient.MAPPER.createObjectNode();
            if (template != null) {
                body.put("template", template);
            }
            if (snapshot != null) {
                body.put("snapshot", snapshot);
            }
            if (image != null) {
                body.put("image", image);
            }
            if (timeoutSeconds != null) {
                body.put("timeoutSeconds", timeoutSeconds);
            }
            if (cluster != null) {
                body.put("cluster", cluster);
            }
            body.set("env", ApiClient.MAPPER.valueToTree(env));
            body.set("metadata", ApiClient.MAPPER.valueToTree(metadata));
            JsonNode created = options.client().call("POST", "/v1/sandboxes", body);
            options.output(spec).object(created, created.path("id").asText());
            return 0;
        }
    }

    @Command(name = "ls", aliases = "list", mixinStandardHelpOptions = true, description = "List sandboxes (every page).")
    static final class Ls implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Option(names = "--state", paramLabel = "STATE", description = "Only running, paused or unreachable ones.")
        String state;
        @Option(names = {"-t", "--template"}, paramLabel = "TEMPLATE", description = "Only sandboxes of this template.")
        String template;
        @Option(names = "--cluster", paramLabel = "CLUSTER", description = "Only sandboxes on this cluster.")
        String cluster;
        @Option(names = {"-m", "--metadata"}, paramLabel = "KEY=VALUE", description = "Only sandboxes with this metadata (repeatable: all must match).")
        List<String> metadata = new ArrayList<>();

        @Override
        public Integer call() {
            List<String> query = new ArrayList<>();
            add(query, "state", state);
            add(query, "template", template);
            add(query, "cluster", cluster);
            metadata.forEach(m -> add(query, "metadata", m));
            String path = "/v1/sandboxes" + (query.isEmpty() ? "" : "?" + String.join("&", query));
            options.output(spec).list(options.client().list(path), COLUMNS);
            return 0;
        }

        private static void add(List<String> query, String name, String value) {
            if (value != null) {
                query.add(name + "=" + ApiClient.enc(value));
            }
        }
    }

    @Command(name = "kill", aliases = "rm", mixinStandardHelpOptions = true,
            description = "Kill sandboxes; each is tried, the exit status is 1 if any failed.")
    static final class Kill implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(arity = "1..*", paramLabel = "SANDBOX_ID")
        List<String> ids;

        @Override
        public Integer call() {
            return eachId(spec, options, ids, "killed", id -> options.client().delete("/v1/sandboxes/" + ApiClient.enc(id)));
        }
    }

    /** Runs {@code action} for each id, printing {@code <verb> <id>} or the error; 1 when any failed. */
    static int eachId(CommandLine.Model.CommandSpec spec, ClientOptions options, List<String> ids, String verb,
                      java.util.function.Consumer<String> action) {
        Output out = options.output(spec);
        PrintWriter err = spec.commandLine().getErr();
        int failed = 0;
        ObjectNode results = ApiClient.MAPPER.createObjectNode();
        for (String id : ids) {
            try {
                action.accept(id);
                results.put(id, verb);
                out.note(verb + " " + id);
            } catch (ApiError e) {
                failed++;
                results.put(id, "error: " + e.getMessage());
                err.println("error: " + id + ": " + e.describe());
            }
        }
        err.flush();
        if (out.json()) {
            out.object(results, null);
        }
        return failed == 0 ? 0 : 1;
    }
}
