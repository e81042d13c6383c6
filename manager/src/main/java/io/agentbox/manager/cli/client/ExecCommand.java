package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox sandbox exec SANDBOX_ID -- CMD [ARG...]}: runs a command in a sandbox ({@code POST
 * /v1/sandboxes/{id}/commands}) and exits with its exit code.
 *
 * <p>Table output streams: the request asks for {@code text/event-stream} and each {@code stdout}
 * / {@code stderr} event is written to this process's stdout / stderr as it arrives. With
 * {@code --output json} the call waits and prints {@code {pid, exitCode, stdout, stderr}}.
 *
 * <p>{@code -i} also streams this process's stdin to the command's ({@code stdin: true}, then
 * {@code POST .../commands/{pid}/stdin} with chunks of at most 64 KiB as they are read, and
 * {@code eof} at the end), from the moment the {@code start} event names the pid.
 *
 * <p>One argument is a bash command line as typed ({@code 'ls | wc -l'}); several are a program
 * and its arguments, each quoted for bash, so {@code -- echo '$HOME'} prints {@code $HOME}.
 */
@Command(name = "exec", mixinStandardHelpOptions = true,
        description = "Run a command in a sandbox (bash -l -c), streaming its output; exits with the command's exit code.")
final class ExecCommand implements Callable<Integer> {
    /** Exit status when the command's end was never reported (stream cut, or no exit code). */
    static final int NO_EXIT_CODE = 1;

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    ClientOptions options;

    @Parameters(index = "0", paramLabel = "SANDBOX_ID")
    String sandboxId;
    @Parameters(index = "1..*", arity = "1..*", paramLabel = "CMD",
            description = "One argument: a bash command line. Several: a program and its arguments (quoted for you).")
    List<String> command;

    @Option(names = {"-e", "--env"}, paramLabel = "NAME=VALUE", description = "Environment variable (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
    @Option(names = {"-w", "--cwd"}, paramLabel = "DIR", description = "Working directory (default: the user's home).")
    String cwd;
    @Option(names = {"-u", "--user"}, paramLabel = "USER", description = "user (default) or root.")
    String user;
    @Option(names = "--timeout", paramLabel = "SECONDS", description = "Kill the command after this many seconds.")
    Integer timeoutSeconds;
    @Option(names = {"-i", "--interactive"}, description = "Send this process's stdin to the command (until end of file).")
    boolean interactive;

    /** Most bytes one stdin call carries (the hub takes up to 1 MiB). */
    static final int STDIN_CHUNK = 64 * 1024;

    @Override
    public Integer call() throws IOException {
        ApiClient client = options.client();
        ObjectNode body = ApiClient.MAPPER.createObjectNode();
        body.put("cmd", commandLine(command));
        body.set("env", ApiClient.MAPPER.valueToTree(env));
        if (cwd != null) {
            body.put("cwd", cwd);
        }
        if (user != null) {
            body.put("user", user);
        }
        if (timeoutSeconds != null) {
            body.put("timeoutSeconds", timeoutSeconds);
        }
        if (interactive) {
            body.put("stdin", true);
        }
        String path = "/v1/sandboxes/" + ApiClient.enc(sandboxId) + "/commands";
        Output output = options.output(spec);
        if (output.json() && interactive) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "-i streams stdin while the command runs; it cannot be combined with --output json");
        }
        if (output.json()) {
            JsonNode result = client.call("POST", path, body);
            output.object(result, null);
            return result.path("exitCode").isInt() ? result.get("exitCode").asInt() : NO_EXIT_CODE;
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int[] exit = {-1};
        String[] error = {null};
        client.events("POST", path, body, e -> {
            JsonNode data = parse(e.data());
            switch (e.name()) {
                case "stdout" -> write(out, data);
                case "stderr" -> write(err, data);
                case "end" -> {
                    exit[0] = data.path("exitCode").isInt() ? data.get("exitCode").asInt() : NO_EXIT_CODE;
                    String why = data.path("error").asText("");
                    // "exit status 7" only repeats the exit code; "signal: killed" says more
                    error[0] = why.isEmpty() || why.equals("exit status " + exit[0]) ? null : why;
                }
                case "start" -> {
                    if (interactive && data.path("pid").canConvertToLong()) {
                        pumpStdin(client, path + "/" + data.get("pid").asLong() + "/stdin");
                    }
                }
                // a failure after the stream started: {code, message, requestId}
                case "error" -> error[0] = data.path("message").asText(e.data())
                        + (data.path("requestId").isTextual() ? " (request id " + data.get("requestId").asText() + ")" : "");
                default -> { } // keep-alives
            }
        });
        out.flush();
        if (error[0] != null) {
            err.println("error: " + error[0]);
        }
        if (exit[0] < 0) {
            err.println("error: the hub ended the stream before the command's end was reported");
            exit[0] = NO_EXIT_CODE;
        }
        err.flush();
        return exit[0];
    }

    /**
     * Copies {@link System#in} to the command on a daemon thread: a chunk per read, then
     * {@code eof}. It stops quietly when a call fails (the command ended and its stdin is gone).
     */
    private static void pumpStdin(ApiClient client, String route) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[STDIN_CHUNK];
            try {
                int n;
                while ((n = System.in.read(buf)) >= 0) {
                    if (n > 0) {
                        client.call("POST", route, ApiClient.MAPPER.createObjectNode()
                                .put("dataBase64", Base64.getEncoder().encodeToString(Arrays.copyOf(buf, n))));
                    }
                }
                client.call("POST", route, ApiClient.MAPPER.createObjectNode().put("eof", true));
            } catch (IOException | RuntimeException e) {
                // the command ended (its stdin went with it) or stdin failed: the output stream tells the rest
            }
        }, "agentbox-stdin");
        t.setDaemon(true);
        t.start();
    }

    /** The {@code cmd} string: one argument as is, several each single-quoted for bash. */
    static String commandLine(List<String> args) {
        if (args.size() == 1) {
            return args.get(0);
        }
        List<String> quoted = new ArrayList<>();
        for (String a : args) {
            quoted.add(a.matches("[A-Za-z0-9_@%+=:,./-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return String.join(" ", quoted);
    }

    private static JsonNode parse(String data) {
        try {
            JsonNode n = ApiClient.MAPPER.readTree(data);
            return n == null ? ApiClient.MAPPER.createObjectNode() : n;
        } catch (IOException e) {
            return ApiClient.MAPPER.createObjectNode().put("data", data);
        }
    }

    private static void write(PrintWriter w, JsonNode event) {
        if (event.path("dataBase64").isTextual()) {
            w.print(new String(Base64.getDecoder().decode(event.get("dataBase64").asText()), StandardCharsets.UTF_8));
        } else {
            w.print(event.path("data").asText(""));
        }
        w.flush();
    }
}
