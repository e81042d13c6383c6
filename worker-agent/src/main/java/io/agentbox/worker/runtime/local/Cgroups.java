package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's cgroup layout as crun sees it. crun puts every sandbox in {@code /agentbox/<id>}
 * (under each v1 hierarchy, or in the v2 tree) with the template's limits and removes it on
 * delete; the parent {@code /agentbox} stays.
 */
final class Cgroups {
    private static final Logger log = LoggerFactory.getLogger(Cgroups.class);
    static final Path ROOT = Path.of("/sys/fs/cgroup");

    enum Mode { V2, V1, HYBRID }

    final Mode mode;
    /** v1 with swap accounting: memory.memsw.* exists (v2 always has memory.swap.max). */
    final boolean swapLimit;

    private Cgroups(Mode mode, boolean swapLimit) {
        this.mode = mode;
        this.swapLimit = swapLimit;
    }

    static Cgroups detect() {
        if (Files.exists(ROOT.resolve("cgroup.controllers"))) {
            return new Cgroups(Mode.V2, true);
        }
        boolean memsw = Files.exists(ROOT.resolve("memory/memory.memsw.limit_in_bytes"));
        boolean hybrid = Files.exists(ROOT.resolve("unified/cgroup.controllers"));
        return new Cgroups(hybrid ? Mode.HYBRID : Mode.V1, memsw);
    }

    /**
     * On v2, lets {@code /agentbox} hand the cpu, memory and pids controllers to its children
     * (crun's cgroupfs manager expects them enabled on the way down).
     */
    void prepare() {
        if (mode != Mode.V2) {
            return;
        }
        try {
            Path parent = ROOT.resolve("agentbox");
            Files.createDirectories(parent);
            for (Path p : List.of(ROOT, parent)) {
                Files.writeString(p.resolve("cgroup.subtree_control"), "+cpu +memory +pids");
            }
        } catch (IOException e) {
            log.warn("cannot enable the cpu, memory and pids controllers for /agentbox: {} (limits may fail)", e.toString());
        }
    }

    /** Directories of sandbox {@code id}'s cgroup that exist (one per v1 hierarchy, or the v2 one). */
    List<Path> dirsOf(String id) {
        List<Path> dirs = new ArrayList<>();
        if (mode == Mode.V2) {
            Path d = ROOT.resolve("agentbox").resolve(id);
            if (Files.isDirectory(d)) {
                dirs.add(d);
            }
            return dirs;
        }
        try (var s = Files.list(ROOT)) {
            for (Path h : s.toList()) {
                Path d = h.resolve("agentbox").resolve(id);
                if (!h.getFileName().toString().equals("unified") && Files.isDirectory(d)) {
                    dirs.add(d);
                }
            }
        } catch (IOException e) {
            // no cgroups visible
        }
        return dirs;
    }

    /**
     * Host pids of every process in sandbox {@code id}'s cgroup ({@code cgroup.procs} of the v1
     * freezer hierarchy or of the v2 tree); empty when the cgroup is gone.
     */
    List<Long> procs(String id) {
        Path d = mode == Mode.V2 ? ROOT.resolve("agentbox").resolve(id) : ROOT.resolve("freezer").resolve("agentbox").resolve(id);
        List<Long> pids = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(d.resolve("cgroup.procs"))) {
                if (!line.isBlank()) {
                    pids.add(Long.parseLong(line.strip()));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone
        }
        return pids;
    }

    /** How long a freeze or thaw may take before it is reported as failed. */
    static final long FREEZE_TIMEOUT_MS = 5_000;
    /**
     * How long one v1 freeze attempt may stay in FREEZING before it is undone and tried again: a
     * task waiting for its vfork child (a shell starting a command) cannot freeze while that child
     * is frozen before its exec, so the attempt would never complete (seen on kernel 6.18 with a
     * busybox shell loop). Each retry waits twice as long (a large sandbox may need longer to
     * freeze at all), up to {@link #V1_ATTEMPT_MAX_MS}.
     */
    static final long V1_ATTEMPT_MS = 20;
    static final long V1_ATTEMPT_MAX_MS = 640;

    /**
     * Freezes ({@code frozen}) or thaws every process in sandbox {@code id}'s cgroup and returns
     * once the kernel reports the new state: v1 writes {@code freezer.state} and waits for
     * {@code FROZEN}/{@code THAWED} (it passes through {@code FREEZING}; an attempt stuck there
     * for {@value #V1_ATTEMPT_MS} ms is thawed and retried); v2 writes {@code cgroup.freeze} and
     * waits for {@code frozen 1|0} in {@code cgroup.events}. Frozen processes keep their memory and
     * pids; a thaw continues them where they stood. A freeze that fails is undone (thawed) before
     * the error.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the cgroup is gone or the state is not
     *     reached within {@value #FREEZE_TIMEOUT_MS} ms
     */
    void freeze(String id, boolean frozen) {
        Path control;
        Path state;
        String want;
        if (mode == Mode.V2) {
            Path d = ROOT.resolve("agentbox").resolve(id);
            control = d.resolve("cgroup.freeze");
            state = d.resolve("cgroup.events");
            want = frozen ? "frozen 1" : "frozen 0";
        } else {
            control = ROOT.resolve("freezer").resolve("agentbox").resolve(id).resolve("freezer.state");
            state = control;
            want = frozen ? "FROZEN" : "THAWED";
        }
        String command = mode == Mode.V2 ? (frozen ? "1" : "0") : want;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FREEZE_TIMEOUT_MS);
        String now = "";
        long attemptMs = V1_ATTEMPT_MS;
        try {
            while (true) {
                Files.writeString(control, command);
                long attemptEnd = mode == Mode.V1 || mode == Mode.HYBRID
                        ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(attemptMs) : deadline;
                attemptMs = Math.min(V1_ATTEMPT_MAX_MS, attemptMs * 2);
                now = await(state, want, Math.min(attemptEnd, deadline));
                if (now == null) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    break;
                }
                // v1, stuck in FREEZING: let the tasks run a moment (a vfork child reaches its exec), then again
                Files.writeString(control, "THAWED");
                Thread.sleep(1);
            }
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("cannot " + (frozen ? "freeze" : "thaw") + " sandbox " + id + ": " + e.getMessage())
                    .asRuntimeException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            undo(control, frozen);
            throw Status.CANCELLED.withDescription("interrupted while freezing sandbox " + id).asRuntimeException();
        }
        undo(control, frozen);
        throw Status.UNAVAILABLE.withDescription("sandbox " + id + " did not become " + (frozen ? "frozen" : "thawed")
                + " within " + FREEZE_TIMEOUT_MS + " ms (state: " + now.trim() + ")").asRuntimeException();
    }

    /** Polls {@code state} until it shows {@code want}; null when it does, else the last state read at {@code until}. */
    private String await(Path state, String want, long until) throws IOException, InterruptedException {
        for (int spins = 0; ; spins++) {
            String now = Files.readString(state);
            if (mode == Mode.V2 ? now.lines().anyMatch(want::equals) : now.trim().equals(want)) {
                return null;
            }
            if (System.nanoTime() > until) {
                return now;
            }
            if (spins > 100) {
                Thread.sleep(1);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** After a failed freeze, thaws again so that the sandbox is not left half frozen. */
    private void undo(Path control, boolean frozen) {
        if (!frozen) {
            return;
        }
        try {
            Files.writeString(control, mode == Mode.V2 ? "0" : "THAWED");
        } catch (IOException e) {
            log.warn("cannot thaw {} after a failed freeze: {}", control, e.toString());
        }
    }
}
