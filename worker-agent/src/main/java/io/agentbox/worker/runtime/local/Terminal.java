package io.agentbox.worker.runtime.local;

import io.agentbox.worker.runtime.TerminalSize;
import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Pseudo-terminals for sandbox commands. Java cannot allocate a pty, so the command runs under
 * util-linux {@code script} inside the sandbox: script opens a pty in the sandbox's own devpts,
 * makes it the controlling terminal of the command (new session), copies its stdin pipe to the
 * terminal and the terminal's output to its stdout, and exits with the command's code
 * ({@code -e}). The window size is set with {@code stty} on the command's terminal, which issues
 * TIOCSWINSZ, so the foreground job also gets SIGWINCH.
 */
final class Terminal {
    static final String SCRIPT = "script";
    /** Sets the size, then becomes the command; {@code $@} is the command's argv. */
    private static final String START = "stty cols \"$1\" rows \"$2\" || exit 1; shift 2; exec \"$@\"";
    /**
     * Finds the command (script's only child; it may not be forked yet) and sets its terminal's
     * size. Exit 3: the terminal never appeared.
     */
    private static final String RESIZE = "for i in 1 2 3 4 5 6 7 8 9 10; do "
            + "c=$(cat /proc/$1/task/$1/children 2>/dev/null); c=${c%% *}; "
            + "if [ -n \"$c\" ]; then exec stty -F /proc/$c/fd/0 cols \"$2\" rows \"$3\"; fi; sleep 0.1; done; exit 3";
    private static final long RESIZE_TIMEOUT_MS = 5_000;

    private Terminal() {}

    /**
     * The argv that runs {@code command} on a new pty of {@code size}: {@code script -q -e -c
     * '<shell>' /dev/null} (no typescript file; {@code -q} drops script's banners).
     */
    static List<String> wrap(List<String> command, TerminalSize size) {
        StringBuilder shell = new StringBuilder("sh -c ").append(quote(START)).append(" sh ")
                .append(size.cols()).append(' ').append(size.rows());
        for (String arg : command) {
            shell.append(' ').append(quote(arg));
        }
        return List.of(SCRIPT, "-q", "-e", "-c", shell.toString(), "/dev/null");
    }

    /**
     * Resizes the terminal of the command started by {@link #wrap} whose sandbox pid is {@code scriptPid}.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when stty fails or the terminal is gone
     */
    static void resize(LocalSandbox sandbox, int scriptPid, TerminalSize size, String user) {
        List<String> inner = new ArrayList<>(List.of("/bin/sh", "-c", RESIZE, "sh", Integer.toString(scriptPid),
                Integer.toString(size.cols()), Integer.toString(size.rows())));
        Process p = sandbox.exec(inner, false, user);
        try {
            if (!p.waitFor(RESIZE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw Status.UNAVAILABLE.withDescription("resizing the pty of process " + scriptPid + " timed out")
                        .asRuntimeException();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
        if (p.exitValue() != 0) {
            throw Status.UNAVAILABLE.withDescription("cannot resize the pty of process " + scriptPid + " (exit "
                    + p.exitValue() + "): " + ShellLaunch.readSome(p.getErrorStream())).asRuntimeException();
        }
    }

    /** POSIX shell single-quoting: the result is one word with exactly {@code s}'s bytes. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
