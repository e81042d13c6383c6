package io.agentbox.manager.cli;

import io.agentbox.manager.cli.client.ApiError;
import io.agentbox.manager.cli.client.ClientException;
import io.agentbox.manager.cli.client.ClientFactory;
import io.agentbox.manager.cli.client.ConfigCommand;
import io.agentbox.manager.cli.client.KeyCommand;
import io.agentbox.manager.cli.client.SandboxCommand;
import io.agentbox.manager.cli.client.TemplateCommand;
import java.net.BindException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code agentbox}: every server mode of AgentBox and the client commands ({@code sandbox},
 * {@code template}, {@code key}, {@code reset}, {@code config}) that talk to a hub's native API.
 */
@Command(name = "agentbox", mixinStandardHelpOptions = true, version = "agentbox 0.1.0",
        description = "Sandbox engine for AI agents: warm pools of isolated Linux sandboxes behind an E2B-compatible API.",
        subcommands = {StandaloneCommand.class, HubCommand.class, WorkerCommand.class, MuxCommand.class, BenchCommand.class, ImageCommand.class,
                SandboxCommand.class, TemplateCommand.class, KeyCommand.class, ResetCommand.class, ConfigCommand.class})
public final class AgentboxCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code --log-format}, accepted before or after the command name. */
    @CommandLine.Option(names = "--log-format", paramLabel = "FORMAT", scope = CommandLine.ScopeType.INHERIT,
            description = "Log lines on stderr: text (default) or json (one JSON object per line, logback's "
                    + "JsonEncoder). Also AGENTBOX_LOG_FORMAT; this option wins.")
    void logFormat(String format) {
        try {
            LogFormat.apply(format);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--log-format: " + e.getMessage());
        }
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: standalone, hub, worker, "
                + "sandbox, template, image, key, reset, config, mux or bench");
    }

    public static void main(String[] args) {
        defaultToVfork();
        System.exit(commandLine(System::getenv, System.console() != null).execute(args));
    }

    /** {@link #commandLine(Function, boolean)} with this process's environment and no terminal. */
    static CommandLine commandLine() {
        return commandLine(System::getenv, false);
    }

    /**
     * The command line as {@code main} runs it: logging already in the format {@link LogFormat#ENV}
     * names (an invalid value is reported and ignored: the option can still set one); client
     * commands resolve their hub from {@code env} and draw progress bars when {@code tty}; a client
     * failure prints {@code error: <message> (request id …)} and exits 1, any other failure one line
     * prefixed {@code agentbox:}.
     */
    public static CommandLine commandLine(Function<String, String> env, boolean tty) {
        try {
            LogFormat.apply(env.apply(LogFormat.ENV));
        } catch (IllegalArgumentException e) {
            System.err.println("agentbox: " + LogFormat.ENV + ": " + e.getMessage() + "; logging as text");
        }
        CommandLine cli = new CommandLine(new AgentboxCommand(), new ClientFactory(env, tty));
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof ApiError a) {
                cmd.getErr().println("error: " + a.describe());
                cmd.getErr().flush();
                return 1;
            }
            if (e instanceof ClientException) {
                cmd.getErr().println("error: " + e.getMessage());
                cmd.getErr().flush();
                return 1;
            }
            cmd.getErr().println("agentbox: " + describe(e));
            if (System.getenv("AGENTBOX_DEBUG") != null) {
                e.printStackTrace(cmd.getErr());
            } else {
                cmd.getErr().println("agentbox: (set AGENTBOX_DEBUG=1 for the stack trace)");
            }
            cmd.getErr().flush();
            return 1;
        });
        return cli;
    }

    /**
     * JDK 17 starts every child through posix_spawn of {@code jspawnhelper}, which then execs the
     * program: one extra exec (about 1 ms of host CPU here) per process, and the local runtime
     * starts a process for every sandbox start and every command. vfork execs the program
     * directly. Must run before the first process starts (the JDK reads it once); a value given
     * with -D wins.
     */
    static void defaultToVfork() {
        if (System.getProperty("jdk.lang.Process.launchMechanism") == null) {
            System.setProperty("jdk.lang.Process.launchMechanism", "VFORK");
        }
    }

    /** One line a user can act on, e.g. "cannot listen on 127.0.0.1:8080: Address already in use". */
    static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof NoSuchFileException f) {
                return "no such file: " + f.getFile();
            }
            if (t instanceof AccessDeniedException f) {
                return "permission denied: " + f.getFile();
            }
            if (t instanceof BindException) {
                String where = e.getMessage() != null && e.getMessage().startsWith("Failed to bind to ")
                        ? e.getMessage().substring("Failed to bind to ".length()) : "the requested port";
                return "cannot listen on " + where.replaceFirst("^/", "") + ": " + t.getMessage()
                        + " (another agentbox running? choose another --port or --management-port)";
            }
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String msg = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        return root == e ? msg : e.getMessage() + ": " + msg;
    }
}
