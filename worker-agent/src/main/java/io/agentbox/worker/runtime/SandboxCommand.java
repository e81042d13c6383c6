package io.agentbox.worker.runtime;

import io.agentbox.mux.util.DaemonThreads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs one shell script in a sandbox through the sandbox's own busybox (so it works in images
 * without a shell) and hands its output over line by line as it comes.
 */
public final class SandboxCommand {
    /** The runtime's static busybox inside every local sandbox. */
    public static final String BUSYBOX = "/.agentbox/bin/busybox";
    /**
     * Runs {@code $1} with bash when the image has it, else with the image's {@code /bin/sh}, else
     * with busybox's (E2B runs RUN steps with bash: docs/e2b-wire.md#step-types).
     */
    public static final String WITH_BASH = "if command -v bash >/dev/null 2>&1; then exec bash -c \"$1\"; fi; "
            + "if [ -x /bin/sh ]; then exec /bin/sh -c \"$1\"; fi; exec " + BUSYBOX + " sh -c \"$1\"";
    /** Longest output line passed on, in chars; longer lines are cut (a command's output can be anything). */
    public static final int MAX_LINE_CHARS = 4096;

    private SandboxCommand() {}

    /**
     * Runs {@code script} (busybox sh) with {@code args} as {@code $1…} and waits for it.
     *
     * @param lines gets each output line (stdout and stderr, cut to {@link #MAX_LINE_CHARS}) as it comes
     * @param timeoutMs kills the command when it runs longer; 0 = no limit
     * @return the exit code (128 + signal when killed by one)
     * @throws io.grpc.StatusRuntimeException from the launch (a cwd that does not exist: INVALID_ARGUMENT)
     */
    public static int run(RuntimeSandbox sandbox, String user, String cwd, Map<String, String> env, String script, List<String> args,
                   Consumer<String> lines, long timeoutMs) throws InterruptedException {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "step"));
        argv.addAll(args);
        LaunchSpec spec = new LaunchSpec(BUSYBOX, argv, env, cwd, false, null, user);
        LaunchedProcess p = sandbox.launch(spec);
        Thread err = pumpThread(p.stderr(), lines, "build-stderr");
        Thread out = pumpThread(p.stdout(), lines, "build-stdout");
        ScheduledFuture<?> killer = timeoutMs > 0 ? KILLER.schedule(() -> p.signalGroup(9), timeoutMs, TimeUnit.MILLISECONDS) : null;
        try {
            int code = p.waitFor();
            out.join(10_000);
            err.join(10_000);
            return code;
        } finally {
            if (killer != null) {
                killer.cancel(false);
            }
            if (p.isAlive()) {
                p.signalGroup(9); // interrupted: the step is abandoned
            }
        }
    }

    private static final ScheduledExecutorService KILLER = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("build-step-timeout"));

    private static Thread pumpThread(InputStream in, Consumer<String> lines, String name) {
        return DaemonThreads.start(name, () -> pump(in, lines));
    }

    private static void pump(InputStream in, Consumer<String> lines) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = r.read()) >= 0) {
                if (c == '\n') {
                    lines.accept(line.toString());
                    line.setLength(0);
                } else if (c != '\r' && line.length() < MAX_LINE_CHARS) {
                    line.append((char) c);
                }
            }
            if (!line.isEmpty()) {
                lines.accept(line.toString());
            }
        } catch (IOException e) {
            // the process ended or was killed; what it printed so far was handed over
        }
    }
}
