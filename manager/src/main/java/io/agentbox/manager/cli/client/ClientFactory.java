package io.agentbox.manager.cli.client;

import java.util.function.Function;
import picocli.CommandLine;

/**
 * Makes picocli's command and mixin objects, handing every {@link ClientOptions} the environment
 * to resolve from and whether stderr is a terminal (for {@link Progress}).
 */
public final class ClientFactory implements CommandLine.IFactory {
    private final CommandLine.IFactory fallback = CommandLine.defaultFactory();
    private final Function<String, String> env;
    private final boolean tty;

    public ClientFactory(Function<String, String> env, boolean tty) {
        this.env = env;
        this.tty = tty;
    }

    /** Whether stderr is a terminal (progress bars redraw in place) or not (plain lines). */
    public boolean tty() {
        return tty;
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
        K made = fallback.create(type);
        if (made instanceof ClientOptions o) {
            o.env = env;
            o.tty = tty;
        }
        return made;
    }
}
