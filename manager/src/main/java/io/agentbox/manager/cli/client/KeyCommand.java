package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox key create|ls|revoke}: API keys through the hub's native API ({@code /v1/keys},
 * admin keys only; others get 403). The secret is shown once, by {@code create}.
 */
@Command(name = "key", mixinStandardHelpOptions = true,
        description = "Create, list and revoke API keys (admin key needed; through the hub's /v1 API).",
        subcommands = {KeyCommand.Create.class, KeyCommand.Ls.class, KeyCommand.Revoke.class})
public final class KeyCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: create, ls or revoke");
    }

    static final List<Output.Column> COLUMNS = List.of(
            Output.Column.of("ID", "id"),
            Output.Column.of("NAME", "name"),
            Output.Column.of("TEAM", "team"),
            Output.Column.of("ROLE", "role"),
            Output.Column.of("CREATED", "createdAt"),
            Output.Column.of("REVOKED", "revokedAt"));

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = "Create an API key; prints the key (shown only this once) and its id.")
    static final class Create implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(index = "0", paramLabel = "NAME", description = "What the key is for.")
        String name;
        @Option(names = "--team", required = true, paramLabel = "TEAM", description = "The team whose sandboxes the key sees.")
        String team;
        @Option(names = "--role", paramLabel = "ROLE", description = "user (default) or admin.")
        String role;

        @Override
        public Integer call() {
            ObjectNode body = ApiClient.MAPPER.createObjectNode().put("name", name).put("team", team);
            if (role != null) {
                body.put("role", role);
            }
            JsonNode k = options.client().call("POST", "/v1/keys", body);
            options.output(spec).object(k, k.path("key").asText() + "\n(id " + k.path("id").asText()
                    + "; the key is not shown again)");
            return 0;
        }
    }

    @Command(name = "ls", aliases = "list", mixinStandardHelpOptions = true, description = "List API keys (never their secrets).")
    static final class Ls implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Override
        public Integer call() {
            options.output(spec).list(options.client().list("/v1/keys"), COLUMNS);
            return 0;
        }
    }

    @Command(name = "revoke", aliases = "rm", mixinStandardHelpOptions = true, description = "Revoke API keys by id.")
    static final class Revoke implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Parameters(arity = "1..*", paramLabel = "KEY_ID")
        List<String> ids;

        @Override
        public Integer call() {
            return SandboxCommand.eachId(spec, options, ids, "revoked",
                    id -> options.client().delete("/v1/keys/" + ApiClient.enc(id)));
        }
    }
}
