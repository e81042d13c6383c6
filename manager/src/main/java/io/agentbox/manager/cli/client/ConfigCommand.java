package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox config set|unset|show}: the client config file ({@link ClientConfig}) and what
 * the client commands would use.
 */
@Command(name = "config", mixinStandardHelpOptions = true,
        description = "Set the hub URL and API key the client commands use, and show where each comes from.",
        subcommands = {ConfigCommand.Set.class, ConfigCommand.Unset.class, ConfigCommand.Show.class})
public final class ConfigCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: set, unset or show");
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Write url or api-key to the config file (mode 0600).")
    static final class Set implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;
        @Parameters(index = "0", paramLabel = "KEY", description = "url or api-key.")
        String key;
        @Parameters(index = "1", paramLabel = "VALUE")
        String value;

        @Override
        public Integer call() throws IOException {
            var file = ClientConfig.file(options.env);
            ClientConfig.set(file, key, value);
            options.output(spec).note("set " + key + " in " + file);
            return 0;
        }
    }

    @Command(name = "unset", mixinStandardHelpOptions = true, description = "Remove url or api-key from the config file.")
    static final class Unset implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;
        @Parameters(index = "0", paramLabel = "KEY", description = "url or api-key.")
        String key;

        @Override
        public Integer call() throws IOException {
            var file = ClientConfig.file(options.env);
            ClientConfig.set(file, key, null);
            options.output(spec).note("unset " + key + " in " + file);
            return 0;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Show the URL and key the client commands would use and where each comes from (the key masked).")
    static final class Show implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        ClientOptions options;

        @Override
        public Integer call() {
            ClientConfig.Resolved r = options.resolved();
            String key = r.apiKey().value();
            String masked = key == null ? null : key.length() <= 8 ? "****" : key.substring(0, 4) + "…" + key.substring(key.length() - 4);
            ObjectNode o = ApiClient.MAPPER.createObjectNode();
            o.put("url", r.url().value()).put("urlFrom", r.url().source());
            o.put("apiKey", masked).put("apiKeyFrom", r.apiKey().source());
            o.put("configFile", r.file().toString());
            options.output(spec).object(o, "url      " + show(r.url().value(), r.url().source()) + "\napi key  "
                    + show(masked, r.apiKey().source()) + "\nconfig   " + r.file());
            return 0;
        }

        private static String show(String value, String source) {
            return value == null ? "(not set)" : value + "  (from " + source + ")";
        }
    }
}
