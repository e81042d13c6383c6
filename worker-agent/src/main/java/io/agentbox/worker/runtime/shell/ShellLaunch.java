package io.agentbox.worker.runtime.shell;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.worker.runtime.EnvVars;
import io.agentbox.worker.runtime.LaunchSpec;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Starting a command through {@code /bin/sh} inside a sandbox: a tiny wrapper enters the cwd,
 * prints its pid on the first stdout line, becomes a process-group leader with {@code setsid}
 * and execs the command (same pid), so the pid clients see is the command's own.
 */
public final class ShellLaunch {
    /** Exit code of the wrapper when the cwd cannot be entered. */
    public static final int CWD_MISSING = 97;
    /** How long the sandbox may take to report the pid of a new command. */
    public static final long START_TIMEOUT_MS = 10_000;
    /** Bytes of argv + env we pass to one command; the kernel's own limit is about 2 MiB. */
    static final int MAX_ARG_BYTES = 512 * 1024;
    /** Enters the cwd given as $1, or exits with {@link #CWD_MISSING}. */
    private static final String CD = "cd -- \"$1\" 2>/dev/null || exit " + CWD_MISSING + "; ";
    private static final String WRAPPER = CD + "echo $$; shift; exec setsid \"$@\"";
    /**
     * The same, for carriers that start the shell with a fixed, clean environment (local nsenter):
     * the spec's variables arrive as {@code NAME=VALUE} arguments up to {@code --} and are exported
     * by the shell itself, which saves the exec of {@code env}; the carrier never holds them in
     * its own environment (a root nsenter would honour LD_PRELOAD and friends).
     */
    private static final String EXPORTING_WRAPPER = CD + "shift; while [ \"$1\" != -- ]; do export \"$1\"; shift; done; shift; echo $$; exec \"$@\"";
    /**
     * The exporting wrapper for a static busybox shell, which runs its own applets in place of
     * commands of the same name (Debian's build prefers applets): the command is looked up on the
     * exported PATH by hand and exec'd by absolute path through {@code $BB setsid}, so the
     * image's own programs run. $1 cwd, NAME=VALUE... up to --, then the command and its arguments.
     */
    private static final String BUSYBOX_WRAPPER = CD + "shift; while [ \"$1\" != -- ]; do export \"$1\"; shift; done; shift; "
            + "c=$1; shift; case $c in */*) ;; *) p=; IFS=:; for d in $PATH; do "
            + "if [ -n \"$d\" ] && [ -f \"$d/$c\" ] && [ -x \"$d/$c\" ]; then p=$d/$c; break; fi; done; unset IFS; "
            + "[ -n \"$p\" ] && c=$p;; esac; echo $$; "
            + "case $c in */*) ;; *) echo \"$c: command not found\" >&2; exit 127;; esac; "
            + "exec \"$_agentbox_bb\" setsid \"$c\" \"$@\"";
    private static final int MAX_PID_LINE = 16;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("launch-watchdog"));

    private ShellLaunch() {}

    /**
     * The full argv: {@code prefix}, then {@code env NAME=VALUE...} for the spec's variables, then
     * the wrapper with the spec's cwd, command and arguments.
     *
     * @param prefix leading words, e.g. {@code env -i HOME=...} to start from a clean environment
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT for a malformed env name, a NUL byte,
     *     or more than {@link #MAX_ARG_BYTES} bytes in total
     */
    public static List<String> argv(List<String> prefix, LaunchSpec spec) {
        List<String> command = new ArrayList<>();
        command.add(spec.cmd());
        command.addAll(spec.args());
        return argv(prefix, spec, command);
    }

    /**
     * As {@link #argv(List, LaunchSpec)} with {@code command} (the spec's command, possibly wrapped,
     * e.g. to run it on a pty) instead of the spec's command and arguments.
     */
    public static List<String> argv(List<String> prefix, LaunchSpec spec, List<String> command) {
        EnvVars.requireValid(spec.env());
        List<String> argv = new ArrayList<>(prefix);
        if (prefix.isEmpty() || !prefix.get(0).equals("env")) {
            argv.add("env");
        }
        for (Map.Entry<String, String> e : spec.env().entrySet()) {
            argv.add(e.getKey() + "=" + e.getValue());
        }
        argv.addAll(List.of("/bin/sh", "-c", WRAPPER, "sh", spec.cwd()));
        argv.addAll(command);
        checkArgs(argv);
        return argv;
    }

    /**
     * The argv after the carrier for {@code /bin/sh} started with a clean environment: the
     * exporting wrapper, the spec's cwd and variables, then {@code setsid} and {@code command}
     * (the spec's command, possibly wrapped). {@link #awaitPid} reads its pid line as usual.
     *
     * @param setsid absolute path of util-linux setsid inside the sandbox (not looked up on the user's PATH)
     * @throws io.grpc.StatusRuntimeException as {@link #argv(List, LaunchSpec)}
     */
    public static List<String> exportingArgv(String setsid, LaunchSpec spec, List<String> command) {
        EnvVars.requireValid(spec.env());
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", EXPORTING_WRAPPER, "sh", spec.cwd()));
        for (Map.Entry<String, String> e : spec.env().entrySet()) {
            argv.add(e.getKey() + "=" + e.getValue());
        }
        argv.add("--");
        argv.add(setsid);
        argv.addAll(command);
        checkArgs(argv);
        return argv;
    }

    /**
     * The argv that runs {@code command} through {@code busybox sh} with the exporting wrapper
     * (see {@link #BUSYBOX_WRAPPER}); {@code env} is the command's whole environment.
     *
     * @param busybox absolute path of a static busybox inside the sandbox
     * @throws io.grpc.StatusRuntimeException as {@link #argv(List, LaunchSpec)}
     */
    public static List<String> busyboxArgv(String busybox, String cwd, Map<String, String> env, List<String> command) {
        EnvVars.requireValid(env);
        List<String> argv = new ArrayList<>(List.of(busybox, "sh", "-c", "_agentbox_bb=" + busybox + "; " + BUSYBOX_WRAPPER,
                "sh", cwd));
        for (Map.Entry<String, String> e : env.entrySet()) {
            argv.add(e.getKey() + "=" + e.getValue());
        }
        argv.add("--");
        argv.addAll(command);
        checkArgs(argv);
        return argv;
    }

    /**
     * Reads the wrapper's pid line from {@code p}'s stdout without consuming command output.
     *
     * @return the command's pid inside the sandbox
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when the cwd does not exist,
     *     NOT_FOUND + SANDBOX_NOT_FOUND when the sandbox is gone; UNAVAILABLE when the command
     *     could not start
     */
    public static int awaitPid(Process p, String cwd, SandboxShell sandbox) {
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(p::destroyForcibly, START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        String line;
        try {
            line = readLine(p.getInputStream());
        } catch (IOException e) {
            line = null;
        } finally {
            watchdog.cancel(false);
        }
        if (line == null) {
            int code;
            try {
                code = p.waitFor(START_TIMEOUT_MS, TimeUnit.MILLISECONDS) ? p.exitValue() : -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                code = -1;
            }
            p.destroyForcibly();
            if (!sandbox.isAlive()) {
                throw sandbox.unavailable();
            }
            if (code == CWD_MISSING) {
                throw Status.INVALID_ARGUMENT.withDescription("cwd '" + cwd + "' does not exist").asRuntimeException();
            }
            throw Status.UNAVAILABLE.withDescription("cannot start process in sandbox (exit " + code + "): "
                    + readSome(p.getErrorStream())).asRuntimeException();
        }
        try {
            return Integer.parseInt(line.trim());
        } catch (NumberFormatException e) {
            p.destroyForcibly();
            throw Status.INTERNAL.withDescription("unexpected pid line from sandbox: " + line).asRuntimeException();
        }
    }

    /**
     * Checks words that become a command's argv and environment: no NUL, at most
     * {@link #MAX_ARG_BYTES} bytes in total.
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT otherwise
     */
    public static void requireArgs(List<String> words) {
        checkArgs(words);
    }

    private static void checkArgs(List<String> argv) {
        long total = 0;
        for (String s : argv) {
            if (s.indexOf('\0') >= 0) {
                throw Status.INVALID_ARGUMENT.withDescription("arguments and environment values must not contain NUL")
                        .asRuntimeException();
            }
            total += s.getBytes(StandardCharsets.UTF_8).length + 1;
        }
        if (total > MAX_ARG_BYTES) {
            throw Status.INVALID_ARGUMENT.withDescription("command, arguments and environment exceed "
                    + MAX_ARG_BYTES + " bytes").asRuntimeException();
        }
    }

    /** Reads one short line byte by byte so that no command output is consumed with it. */
    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (sb.length() <= MAX_PID_LINE) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                return sb.toString();
            }
            sb.append((char) b);
        }
        return sb.toString();
    }

    /** Up to 2,000 bytes of {@code in} as text, for error messages. */
    public static String readSome(InputStream in) {
        try {
            byte[] buf = in.readNBytes(2000);
            return new String(buf, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "(no output)";
        }
    }
}
