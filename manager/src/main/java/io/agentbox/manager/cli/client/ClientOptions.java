package io.agentbox.manager.cli.client;

import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options every client command takes ({@code --url}, {@code --api-key}, {@code --output}) and
 * what they lead to: the resolved hub ({@link ClientConfig}), an {@link ApiClient}, an
 * {@link Output} and {@link Progress} reports. The process environment and whether stderr is a
 * terminal come from {@link ClientFactory} (tests give their own).
 */
public final class ClientOptions {
    @Option(names = "--url", paramLabel = "URL",
            description = "The hub's public API, e.g. http://127.0.0.1:8080 (default: $AGENTBOX_URL, $E2B_API_URL, "
                    + "then the config file).")
    String url;

    @Option(names = "--api-key", paramLabel = "KEY",
            description = "API key (default: $AGENTBOX_API_KEY, $E2B_API_KEY, then the config file).")
    String apiKey;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "table or json (default: ${DEFAULT-VALUE}).")
    Output.Format output;

    Function<String, String> env = System::getenv;
    boolean tty;

    /** The URL and key as resolved (either may be unset). */
    public ClientConfig.Resolved resolved() {
        return ClientConfig.resolve(url, apiKey, env);
    }

    /**
     * A client of the resolved hub.
     *
     * @throws ClientException when the URL or key is missing
     */
    public ApiClient client() {
        return new ApiClient(resolved().require());
    }

    public Output output(CommandLine.Model.CommandSpec spec) {
        return new Output(spec.commandLine().getOut(), output);
    }

    public Progress progress(CommandLine.Model.CommandSpec spec, String label) {
        return new Progress(spec.commandLine().getErr(), tty, label);
    }
}
