package io.agentbox.manager.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Debian's {@code podman} CLI, rootful, on a throwaway store of its own (a temp dir for its root,
 * run root and tmp), so the bench neither sees nor touches the host's containers and images. Every
 * call is one {@code podman} process, as a user's script would run it; {@link #timed} measures it
 * from the spawn to its exit.
 *
 * <p>Fixed choices for the hosts this runs on (docs/benchmarks.md#podman-as-a-peer): storage driver
 * overlay, cgroup manager cgroupfs (no systemd needed), OCI runtime crun (the one our sandboxes
 * use), and explicit {@code nofile}/{@code nproc} rlimits no higher than this process's own:
 * podman's default of 1,048,576 fails in crun without CAP_SYS_RESOURCE.
 *
 * <p>Errors: a missing podman, a failed call or a call that outlasts {@link #CALL_TIMEOUT_S}
 * throws {@link BenchException} with the command and what podman printed.
 */
final class Podman implements AutoCloseable {
    static final long CALL_TIMEOUT_S = 120;
    /** The cgroup2 mount of a hybrid host: crun refuses to run while it has controllers. */
    static final Path HYBRID_CONTROLLERS = Path.of("/sys/fs/cgroup/unified/cgroup.controllers");

    private final List<String> global;
    private final Path dir;
    /** podman's cgroupfs parents this run made (none existed before): removed again at {@link #close}. */
    private final List<Path> newCgroups;
    private final Path output;
    final String version;
    /** The image as this store names it (podman prefixes {@code localhost/} to a registry-less name). */
    final String image;
    /** {@code podman run/create} options every container gets: network, rlimits, no pulls. */
    final List<String> containerOptions;

    private Podman(List<String> global, Path dir, List<Path> newCgroups, String version, String image,
                   List<String> containerOptions) {
        this.global = global;
        this.dir = dir;
        this.newCgroups = newCgroups;
        this.output = dir.resolve("output.txt");
        this.version = version;
        this.image = image;
        this.containerOptions = containerOptions;
    }

    /**
     * Makes the store and loads {@code archive} (a {@code docker save} or OCI archive) into it.
     *
     * @param network podman's {@code --network} value for every container ({@code none}, {@code bridge})
     */
    static Podman open(Path archive, String network) {
        if (hybridCgroups()) {
            throw new BenchException("podman: this host mounts cgroup2 beside the v1 hierarchies with controllers in it ("
                    + HYBRID_CONTROLLERS + " is not empty) and crun refuses to run there (\"cgroups in hybrid mode not "
                    + "supported\"): run the bench in its own mount namespace without that mount, as deploy/bin/bench does "
                    + "(unshare --mount --propagation private, then umount /sys/fs/cgroup/unified)");
        }
        Path dir;
        try {
            // short: podman 4.3.1 refuses a run root longer than 50 characters
            dir = Files.createTempDirectory("abpod");
        } catch (IOException e) {
            throw new BenchException("podman: cannot make its store directory: " + e.getMessage());
        }
        List<String> global = List.of("podman", "--root", dir.resolve("root").toString(), "--runroot",
                dir.resolve("r").toString(), "--tmpdir", dir.resolve("tmp").toString(), "--storage-driver", "overlay",
                "--cgroup-manager", "cgroupfs", "--runtime", "crun");
        List<Path> newCgroups = cgroupParents().stream().filter(c -> !Files.exists(c)).toList();
        Podman p = new Podman(global, dir, newCgroups, "", "", List.of());
        String version;
        try {
            version = p.call("version", "--format", "{{.Client.Version}}").strip();
        } catch (RuntimeException e) {
            p.deleteDir(); // nothing in the store yet
            throw e;
        }
        try {
            String said = p.call("load", "--quiet", "--input", archive.toString());
            String image = loadedImage(said);
            if (image == null) {
                throw new BenchException("podman load " + archive + ": no \"Loaded image\" line in: " + said.strip());
            }
            long nofile = Math.min(hardLimit("Max open files", 1_048_576), 1_048_576);
            long nproc = Math.min(hardLimit("Max processes", 1_048_576), pidMax());
            List<String> options = List.of("--network", network, "--pull", "never", "--ulimit",
                    "nofile=" + nofile + ":" + nofile, "--ulimit", "nproc=" + nproc + ":" + nproc);
            return new Podman(global, dir, newCgroups, version, image, options);
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /**
     * The image name in {@code podman load}'s answer: "Loaded image: localhost/bench/busybox:1"
     * ("Loaded image(s): ..." in other versions), maybe after warnings; null without one.
     */
    static String loadedImage(String said) {
        Matcher m = Pattern.compile("(?m)^Loaded image(?:\\(s\\))?: *(\\S+)").matcher(said);
        return m.find() ? m.group(1) : null;
    }

    /** Runs {@code podman args...} and returns its output (stdout and stderr). */
    String call(String... args) {
        return call(List.of(args));
    }

    String call(List<String> args) {
        run(args);
        try {
            return Files.readString(output, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new BenchException("podman " + String.join(" ", args) + ": cannot read its output: " + e.getMessage());
        }
    }

    /** @return nanoseconds from spawning {@code podman args...} to its exit (status 0, else BenchException) */
    long timed(List<String> args) {
        return run(args);
    }

    /** {@code podman run|create} arguments: {@code verb}, extra options, {@link #containerOptions}, the image and argv. */
    List<String> container(String verb, List<String> options, String... argv) {
        List<String> a = new ArrayList<>();
        a.add(verb);
        a.addAll(options);
        a.addAll(containerOptions);
        a.add(image);
        a.addAll(List.of(argv));
        return a;
    }

    private long run(List<String> args) {
        List<String> cmd = new ArrayList<>(global);
        cmd.addAll(args);
        // output to a file, not a pipe: a pipe could be held open by conmon after podman exits
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile());
        long t0 = System.nanoTime();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new BenchException("cannot run podman (" + e.getMessage() + "): install it (Debian: apt-get install podman) "
                    + "or leave the podman rounds out (deploy/bin/bench --no-podman)");
        }
        try {
            if (!p.waitFor(CALL_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new BenchException("podman " + String.join(" ", args) + ": no exit after " + CALL_TIMEOUT_S + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
        long took = System.nanoTime() - t0;
        if (p.exitValue() != 0) {
            String said;
            try {
                said = Files.readString(output, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                said = "(output unreadable: " + e.getMessage() + ")";
            }
            throw new BenchException("podman " + String.join(" ", args) + ": exit " + p.exitValue() + ": "
                    + (said.length() > 500 ? said.substring(0, 500) : said));
        }
        return took;
    }

    /**
     * Removes every container of the store, then the store (podman unmounts its overlay home), the
     * directory, and the empty cgroup parents podman left that were not there before.
     */
    @Override
    public void close() {
        try {
            run(List.of("rm", "--all", "--force", "--time", "0"));
        } catch (BenchException e) {
            System.err.println("bench: podman cleanup: " + e.getMessage());
        }
        try {
            run(List.of("system", "reset", "--force"));
        } catch (BenchException e) {
            System.err.println("bench: podman cleanup: " + e.getMessage());
        }
        deleteDir();
        for (Path c : newCgroups) {
            // rmdir of an empty cgroup; one still in use (another podman started meanwhile) stays
            c.resolve("conmon").toFile().delete();
            c.toFile().delete();
        }
    }

    private void deleteDir() {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            System.err.println("bench: podman cleanup: " + dir + ": " + e.getMessage());
        }
    }

    /** Where podman's cgroupfs manager puts its containers: libpod_parent in each v1 hierarchy, or at the v2 root. */
    private static List<Path> cgroupParents() {
        Path root = Path.of("/sys/fs/cgroup");
        List<Path> out = new ArrayList<>();
        out.add(root.resolve("libpod_parent"));
        try (Stream<Path> hierarchies = Files.list(root)) {
            hierarchies.filter(h -> Files.isDirectory(h) && !Files.isSymbolicLink(h))
                    .forEach(h -> out.add(h.resolve("libpod_parent")));
        } catch (IOException e) {
            // no cgroup file system to clean up
        }
        return out;
    }

    static boolean hybridCgroups() {
        try {
            return Files.exists(HYBRID_CONTROLLERS) && !Files.readString(HYBRID_CONTROLLERS).isBlank();
        } catch (IOException e) {
            return false;
        }
    }

    /** This process's hard limit from /proc/self/limits; {@code unlimited} (or unreadable) is {@code ceiling}. */
    static long hardLimit(String name, long ceiling) {
        try {
            return hardLimit(Files.readString(Path.of("/proc/self/limits")), name, ceiling);
        } catch (IOException e) {
            return ceiling;
        }
    }

    static long hardLimit(String limits, String name, long ceiling) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\s+(\\S+)\\s+(\\S+)").matcher(limits);
        if (!m.find() || m.group(2).equals("unlimited")) {
            return ceiling;
        }
        return Long.parseLong(m.group(2));
    }

    /**
     * The kernel's pid_max: podman 4.3.1's re-executed process and its conmon were seen running with
     * RLIMIT_NPROC at this value (32,768) below the shell's 96,363, and crun cannot raise it again.
     * Root's processes are not held to RLIMIT_NPROC, so the value changes nothing in the container.
     */
    private static long pidMax() {
        try {
            return Long.parseLong(Files.readString(Path.of("/proc/sys/kernel/pid_max")).strip());
        } catch (IOException | NumberFormatException e) {
            return 32_768;
        }
    }
}
