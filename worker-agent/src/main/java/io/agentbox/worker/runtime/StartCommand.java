package io.agentbox.worker.runtime;

import io.agentbox.worker.image.BuiltImageLabels;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.SandboxImage;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The start and ready commands of a built template ({@link BuiltImageLabels}): the start command
 * runs in the background of a new sandbox (as the template's final USER, in its final WORKDIR, with
 * the build's ENV), and the sandbox counts as started only once the ready command exits 0. E2B
 * snapshots a running VM after doing this once at build time (docs/e2b-wire.md#start-and-ready-commands);
 * without memory snapshots AgentBox does it at every start, before a warm pool counts the sandbox
 * as idle, so a claimed sandbox has its start command running and ready.
 *
 * <p>The ready command is polled every {@value #POLL_MS} ms inside the sandbox (one shell loop, no
 * exec per poll). A start command that has exited with a non-zero status by the time the ready
 * command passes, or while it is polled, fails the start (checked after a pass too, since a ready
 * command that only waits, such as {@code waitForTimeout}'s {@code sleep}, passes whatever the
 * start command did); one that exited with 0 may have left a daemon behind, so polling goes on.
 * Without a ready command the sandbox is ready as soon as the start command was started.
 */
public final class StartCommand {
    static final int POLL_MS = 100;
    /** How long a ready command may take at a sandbox start. */
    public static final long DEFAULT_LIMIT_MS = 10 * 60_000;
    /** Where the build's check keeps the start command's output (inside a throwaway sandbox). */
    public static final String BUILD_LOG = "/tmp/.agentbox-start.log";
    /**
     * $1 start command, $2 ready command (may be empty), $3 where the start command's output goes,
     * $4 polls before giving up. Exit 0 ready, 3 start command ended (its status on stderr), 4 timed out.
     */
    private static final String SCRIPT = "run() { if command -v bash >/dev/null 2>&1; then bash -c \"$1\"; "
            + "else sh -c \"$1\"; fi; }\n"
            // exec in a subshell: a redirected function call would keep the caller's stdout (our pipe) open in a saved fd
            + "( exec >\"$3\" 2>&1 </dev/null; if command -v bash >/dev/null 2>&1; then exec bash -c \"$1\"; fi; exec sh -c \"$1\" ) &\n"
            + "pid=$!\n"
            + "[ -z \"$2\" ] && exit 0\n"
            // a start command that ended with status 0 may have started a daemon: keep polling for it
            + "st=\n"
            + "ended() { if [ -z \"$st\" ] && ! kill -0 \"$pid\" 2>/dev/null; then wait \"$pid\"; st=$?; fi\n"
            + "  if [ -n \"$st\" ] && [ \"$st\" -ne 0 ]; then echo \"the start command exited with status $st"
            + " before the ready command passed\" >&2; exit 3; fi; }\n"
            + "i=0\nwhile [ \"$i\" -lt \"$4\" ]; do\n"
            // checked after a pass too: a ready command that is only a wait (waitForTimeout) passes whatever happened
            + "  if run \"$2\" >/dev/null 2>&1 </dev/null; then ended; exit 0; fi\n"
            + "  ended\n"
            + "  sleep 0." + POLL_MS / 100 + "; i=$((i+1))\ndone\n"
            + "echo \"the ready command did not pass within $(( $4 / 10 )) s\" >&2; exit 4\n";

    private StartCommand() {}

    /** Whether sandboxes of {@code image} have a start command. */
    public static boolean present(Optional<SandboxImage> image) {
        return image.isPresent() && !image.get().config().label(BuiltImageLabels.START_CMD).isEmpty();
    }

    /**
     * Starts the image's start command in {@code sandbox} and waits for its ready command; nothing
     * when the image has no start command.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE naming the template's commands and what failed
     */
    public static void apply(RuntimeSandbox sandbox, Optional<SandboxImage> image) {
        if (!present(image)) {
            return;
        }
        List<String> lines = new ArrayList<>();
        int code;
        try {
            code = run(sandbox, image.get().config(), "/dev/null", DEFAULT_LIMIT_MS, lines::add);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted while waiting for the ready command").asRuntimeException();
        }
        if (code != 0) {
            throw Status.UNAVAILABLE.withDescription("sandbox " + sandbox.id() + " of " + image.get().reference()
                    + ": start command '" + image.get().config().label(BuiltImageLabels.START_CMD) + "': "
                    + String.join("; ", lines)).asRuntimeException();
        }
    }

    /**
     * Runs the start command and waits for the ready command.
     *
     * @param output where the start command's output goes inside the sandbox
     * @param lines gets the script's own messages
     * @return 0 ready, 3 the start command ended first, 4 timed out, other: the script could not run
     */
    public static int run(RuntimeSandbox sandbox, ImageConfig config, String output, long limitMs, Consumer<String> lines)
            throws InterruptedException {
        String user = config.user().isEmpty() ? LaunchSpec.USER : config.user();
        String cwd = !config.workingDir().isEmpty() ? config.workingDir() : LaunchSpec.ROOT.equals(user) ? "/root" : "/home/user";
        Map<String, String> env = new LinkedHashMap<>(BuiltImageLabels.buildEnv(config));
        long polls = Math.max(1, limitMs / POLL_MS);
        return SandboxCommand.run(sandbox, user, cwd, env, SCRIPT, List.of(config.label(BuiltImageLabels.START_CMD),
                config.label(BuiltImageLabels.READY_CMD), output, Long.toString(polls)), lines, limitMs + 30_000);
    }
}
