package io.agentbox.manager.cli;

import io.agentbox.manager.cli.client.ApiClient;
import io.agentbox.manager.cli.client.ApiError;
import io.agentbox.manager.cli.client.ClientException;
import io.agentbox.manager.cli.client.ClientOptions;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox reset SANDBOX_ID...}: returns sandboxes to their template's or snapshot's file
 * system with fresh processes, keeping id, access token and address ({@code POST
 * /v1/sandboxes/{id}/reset} on the hub's public API; docs/snapshots-and-reset.md). Prints one line
 * per sandbox: its id and how long the reset took. Exit status 1 when any reset failed (the
 * hub's message is printed). Finds the hub and key as every client command does (docs/cli.md).
 */
@Command(name = "reset", mixinStandardHelpOptions = true,
        description = "Reset sandboxes (RL episodes): fresh files and processes, same id, access token and address.")
final class ResetCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions options;

    @Parameters(arity = "1..*", paramLabel = "SANDBOX_ID", description = "Sandboxes to reset, one after another.")
    List<String> sandboxIds;

    @Override
    public Integer call() {
        ApiClient client = options.client();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int failed = 0;
        for (String id : sandboxIds) {
            long started = System.nanoTime();
            try {
                client.call("POST", "/v1/sandboxes/" + ApiClient.enc(id) + "/reset", "{}");
                out.println(id + " reset in " + (System.nanoTime() - started) / 1_000_000 + " ms");
            } catch (ApiError e) {
                failed++;
                err.println(id + ": " + e.status() + " " + e.describe());
            } catch (ClientException e) {
                failed++;
                err.println(id + ": " + e.getMessage());
            }
        }
        out.flush();
        err.flush();
        return failed == 0 ? 0 : 1;
    }
}
