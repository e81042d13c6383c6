package io.agentbox.worker.runtime.local;

import io.agentbox.mux.util.DaemonThreads;
import io.grpc.Status;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The private mount namespace every overlay mount and every crun call of one runtime happens in
 * (so nothing of it shows in the host's mount table), held open by a small shell that waits on a
 * pipe from the worker's JVM. Nothing is ever written to the pipe: when the JVM ends, however it
 * ends, the pipe reaches end-of-file and the holder deletes (SIGKILL) every container of the
 * runtime's crun state directory before it exits, so sandboxes end with their worker.
 *
 * <p>On hybrid cgroup hosts (cgroup v1 controllers plus a cgroup2 mount at
 * /sys/fs/cgroup/unified) the cgroup2 mount is unmounted inside the namespace: crun 1.8.1 refuses
 * to run when that mount holds controllers ("cgroups in hybrid mode not supported").
 */
final class Holder implements AutoCloseable {
    /**
     * $1 crun, $2 crun state dir, $3 dir to cover with the runtime's tmpfs, $4 size of it in MiB,
     * $5 "1" to unmount the hybrid cgroup2 mount.
     */
    private static final String SCRIPT = "set -u\n"
            + "if [ \"$5\" = 1 ]; then umount /sys/fs/cgroup/unified || exit 3; fi\n"
            + "mount -t tmpfs -o mode=0711,size=\"$4\"m agentbox-run \"$3\" || exit 4\n"
            + "echo ready\n"
            + "cat >/dev/null\n"
            + "\"$1\" --root \"$2\" list -q 2>/dev/null | while read -r id; do \"$1\" --root \"$2\" delete -f \"$id\"; done\n";

    private final HostTools tools;
    private final Process process;
    private final String nsPath;

    private Holder(HostTools tools, Process process) {
        this.tools = tools;
        this.process = process;
        this.nsPath = "/proc/" + process.pid() + "/ns/mnt";
    }

    /**
     * Starts the holder and waits until its namespace is ready.
     *
     * @param runDir host directory covered by a tmpfs inside the namespace (engine layers, mask layer)
     * @throws IllegalStateException when the namespace cannot be set up, with the holder's message
     */
    static Holder start(HostTools tools, Path crunRoot, Path runDir, int runMb, boolean hybridCgroups) {
        // setsid: its own process group, so a kill of the worker's group (a terminal's ^C, a test
        // runner's timeout) leaves it alive to delete the containers when the pipe ends
        ProcessBuilder pb = new ProcessBuilder(tools.setsid.toString(), tools.unshare.toString(), "--mount", "--propagation", "private", "--",
                tools.sh.toString(), "-c", SCRIPT, "holder", tools.crun.toString(), crunRoot.toString(), runDir.toString(),
                Integer.toString(runMb), hybridCgroups ? "1" : "0")
                .redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the mount namespace holder: " + e.getMessage(), e);
        }
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder said = new StringBuilder();
            String line;
            while ((line = out.readLine()) != null) {
                if (line.equals("ready")) {
                    // later output (crun delete messages at the end) must not block the holder
                    DaemonThreads.start("holder-output", () -> {
                        try {
                            p.getInputStream().transferTo(OutputStream.nullOutputStream());
                        } catch (IOException ignored) {
                            // holder gone
                        }
                    });
                    return new Holder(tools, p);
                }
                if (said.length() < 2000) {
                    said.append(line).append('\n');
                }
            }
            p.waitFor(5, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot set up the sandboxes' mount namespace (exit "
                    + (p.isAlive() ? "?" : p.exitValue()) + "): " + said.toString().strip());
        } catch (IOException | InterruptedException e) {
            p.destroyForcibly();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("cannot set up the sandboxes' mount namespace: " + e.getMessage(), e);
        }
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** {@code argv} prefixed so that it runs in the holder's mount namespace (nsenter execs it: same pid). */
    List<String> enter(List<String> argv) {
        List<String> all = new ArrayList<>(argv.size() + 3);
        all.add(tools.nsenter.toString());
        all.add("--mount=" + nsPath);
        all.add("--");
        all.addAll(argv);
        return all;
    }

    /** A path that reaches {@code inside} (an absolute path of the namespace) from the host. */
    Path view(Path inside) {
        return Path.of("/proc/" + process.pid() + "/root" + inside.toAbsolutePath());
    }

    /**
     * Runs a shell script in the namespace and waits for it.
     *
     * @return its combined output
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE naming {@code what} with the script's output
     *     when it fails or runs longer than {@code timeoutMs}
     */
    String sh(String what, String script, List<String> args, long timeoutMs) {
        List<String> argv = new ArrayList<>(List.of(tools.sh.toString(), "-c", script, "sh"));
        argv.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(enter(argv)).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readNBytes(64 * 1024);
            if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw Status.UNAVAILABLE.withDescription(what + " timed out after " + timeoutMs + " ms").asRuntimeException();
            }
            String text = new String(out, StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0) {
                throw Status.UNAVAILABLE.withDescription(what + " failed (exit " + p.exitValue() + "): "
                        + (text.length() > 2000 ? text.substring(0, 2000) : text)).asRuntimeException();
            }
            return text;
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription(what + " failed: " + e.getMessage()).asRuntimeException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription(what + " interrupted").asRuntimeException();
        }
    }

    /** Closes the pipe: the holder deletes what is left of the runtime's containers and exits. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // already closed
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
