package io.agentbox.worker.service;

import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.protocol.v1.FsEvent;
import io.agentbox.protocol.v1.FsEventType;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.shell.ShellFiles;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One {@code WatchDir} call: {@code inotifywait} (Debian package inotify-tools) runs inside the
 * sandbox as the requesting user, so the watch sees exactly the sandbox's view of the tree with the
 * user's rights, and the kernel's inotify does the work (no polling, no snapshot of the tree in
 * memory). Events are mapped to envd's types the way envd's fsnotify reports them: a rename
 * is RENAME for the old name and CREATE for the new one (docs/e2b-wire.md#watching-a-directory).
 *
 * <p>Limits: at most {@link #MAX_WATCHES} watches per worker; at most {@link #MAX_QUEUED} events
 * wait for a slow client, then the watch fails with RESOURCE_EXHAUSTED; a path longer than
 * {@link #MAX_FIELD_BYTES} ends the watch.
 */
final class DirWatch {
    static final String TOOL = "inotifywait";
    static final int MAX_QUEUED = 10_000;
    static final int MAX_WATCHES = 256;
    private static final AtomicInteger ACTIVE = new AtomicInteger();
    static final int MAX_FIELD_BYTES = 16 * 1024;
    private static final String EVENTS = "create,modify,delete,move,attrib";
    /** What inotifywait prints on stderr once every watch is in place. */
    private static final String READY = "Watches established.";

    private final RuntimeSandbox sandbox;
    private final ServerCallStreamObserver<WatchDirEvent> call;
    private final String dir;
    // guarded by this
    private final ArrayDeque<WatchDirEvent> queue = new ArrayDeque<>();
    private boolean done;
    private LaunchedProcess process;
    private boolean released;

    private DirWatch(RuntimeSandbox sandbox, ServerCallStreamObserver<WatchDirEvent> call, String dir) {
        this.sandbox = sandbox;
        this.call = call;
        this.dir = dir;
    }

    /**
     * Starts watching {@code dir} (an absolute sandbox path) as {@code user} ("user" or "root")
     * and streams to {@code call} until it
     * is cancelled or the directory goes away (completed), or the sandbox is killed (UNAVAILABLE
     * naming the sandbox, so that a client can tell it from a watch that ended normally).
     *
     * @throws io.grpc.StatusRuntimeException NOT_FOUND (no such path), FAILED_PRECONDITION (not a
     *     directory), and the launch errors of {@link RuntimeSandbox#launch}
     */
    static void start(RuntimeSandbox sandbox, String user, String dir, boolean recursive,
                      ServerCallStreamObserver<WatchDirEvent> call, Executor blocking) {
        EntryInfo entry = sandbox.files(user).stat(dir);
        if (entry.getType() != FileType.FILE_TYPE_DIRECTORY) {
            throw Status.FAILED_PRECONDITION.withDescription("'" + dir + "' is not a directory").asRuntimeException();
        }
        if (ACTIVE.incrementAndGet() > MAX_WATCHES) {
            ACTIVE.decrementAndGet();
            throw Status.RESOURCE_EXHAUSTED.withDescription("worker already runs " + MAX_WATCHES + " directory watches")
                    .asRuntimeException();
        }
        DirWatch w = new DirWatch(sandbox, call, dir);
        LaunchedProcess p;
        try {
            p = sandbox.launch(new LaunchSpec(TOOL, args(dir, recursive), Map.of(), "/", false, null, user));
        } catch (RuntimeException e) {
            ACTIVE.decrementAndGet();
            throw e;
        }
        call.setOnReadyHandler(w::drain);
        call.setOnCancelHandler(w::stop);
        synchronized (w) {
            w.process = p;
            if (w.done) {
                p.signalGroup(9); // cancelled while launching
                return;
            }
        }
        blocking.execute(() -> w.readStderr(p));
        blocking.execute(() -> w.readEvents(p));
    }

    private static List<String> args(String dir, boolean recursive) {
        return recursive
                ? List.of("-m", "-r", "-e", EVENTS, "--format", "%e%0%w%f%0", "--no-newline", "--", dir)
                : List.of("-m", "-e", EVENTS, "--format", "%e%0%w%f%0", "--no-newline", "--", dir);
    }

    /** Waits for the watches, then sends {@code started}; reports why inotifywait failed otherwise. */
    private void readStderr(LaunchedProcess p) {
        StringBuilder early = new StringBuilder();
        boolean ready = false;
        try (InputStream err = p.stderr()) {
            String line;
            while ((line = readLine(err, '\n')) != null) {
                if (!ready && line.startsWith(READY)) {
                    ready = true;
                    send(WatchDirEvent.newBuilder().setStarted(true).build());
                } else if (!ready && early.length() < 2000) {
                    early.append(line).append('\n');
                }
            }
        } catch (IOException e) {
            // process gone
        }
        if (!ready) {
            String why = early.toString().strip();
            Status status = why.contains("No such file") && why.contains(TOOL)
                    || why.contains("failed to execute " + TOOL)
                    ? Status.UNAVAILABLE.withDescription(TOOL + " is not installed for the sandbox (install the Debian "
                    + "package inotify-tools on the worker): " + why)
                    : Status.UNAVAILABLE.withDescription("cannot watch '" + dir + "': " + why);
            fail(status);
        }
    }

    private void readEvents(LaunchedProcess p) {
        try (InputStream out = p.stdout()) {
            String kinds;
            boolean uploadMoved = false;
            while ((kinds = readLine(out, '\0')) != null) {
                String path = readLine(out, '\0');
                if (path == null) {
                    break;
                }
                if (ShellFiles.isWriteTemp(path)) {
                    // a file write's temp file (ShellFiles#write): only its move onto the target is shown
                    uploadMoved = kinds.contains("MOVED_FROM");
                    continue;
                }
                List<FsEventType> types = uploadMoved && kinds.contains("MOVED_TO")
                        ? List.of(FsEventType.FS_EVENT_TYPE_CREATE, FsEventType.FS_EVENT_TYPE_WRITE) // as envd's create + write
                        : types(kinds);
                uploadMoved = false;
                for (FsEventType type : types) {
                    send(WatchDirEvent.newBuilder().setFs(FsEvent.newBuilder().setName(relative(path)).setType(type)).build());
                }
            }
        } catch (IOException e) {
            fail(Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()));
            return;
        }
        try {
            p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // a kill marks the sandbox dead before it ends its processes, inotifywait among them
        if (!sandbox.isAlive()) {
            fail(Status.UNAVAILABLE.withDescription("sandbox " + sandbox.id() + " was killed; the watch on '"
                    + dir + "' ended"));
            return;
        }
        finish(); // the directory itself went away (or the watch was stopped)
    }

    /** inotify event names (comma-joined, e.g. {@code CREATE,ISDIR}) → envd event types. */
    static List<FsEventType> types(String kinds) {
        List<String> k = List.of(kinds.split(","));
        if (k.contains("CREATE") || k.contains("MOVED_TO")) {
            return List.of(FsEventType.FS_EVENT_TYPE_CREATE);
        }
        if (k.contains("MODIFY")) {
            return List.of(FsEventType.FS_EVENT_TYPE_WRITE);
        }
        if (k.contains("DELETE")) {
            return List.of(FsEventType.FS_EVENT_TYPE_REMOVE);
        }
        if (k.contains("MOVED_FROM")) {
            return List.of(FsEventType.FS_EVENT_TYPE_RENAME);
        }
        if (k.contains("ATTRIB")) {
            return List.of(FsEventType.FS_EVENT_TYPE_CHMOD);
        }
        return List.of(); // DELETE_SELF, MOVE_SELF, IGNORED: the watch ends on its own
    }

    /** Event path relative to the watched directory, as envd names it. */
    private String relative(String path) {
        String prefix = dir.endsWith("/") ? dir : dir + "/";
        return path.startsWith(prefix) ? path.substring(prefix.length()) : path;
    }

    private void send(WatchDirEvent event) {
        synchronized (this) {
            if (done) {
                return;
            }
            if (queue.size() >= MAX_QUEUED) {
                fail(Status.RESOURCE_EXHAUSTED.withDescription("the client did not read " + MAX_QUEUED
                        + " pending events of the watch on '" + dir + "'"));
                return;
            }
            queue.addLast(event);
        }
        drain();
    }

    private synchronized void drain() {
        while (!done && !queue.isEmpty() && call.isReady()) {
            call.onNext(queue.removeFirst());
        }
    }

    private void finish() {
        synchronized (this) {
            if (done) {
                return;
            }
            drain();
            done = true;
            queue.clear();
        }
        stop();
        if (!call.isCancelled()) {
            call.onCompleted();
        }
    }

    private void fail(Status status) {
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            queue.clear();
        }
        stop();
        if (!call.isCancelled()) {
            call.onError(status.asRuntimeException());
        }
    }

    /** Ends inotifywait and frees the watch's slot; idempotent. */
    private void stop() {
        LaunchedProcess p;
        synchronized (this) {
            if (!released) {
                released = true;
                ACTIVE.decrementAndGet();
            }
            done = true;
            p = process;
        }
        if (p != null && p.isAlive()) {
            p.signalGroup(9);
        }
    }

    /** Reads up to {@code end} (excluded); null at EOF before any byte. */
    private static String readLine(InputStream in, char end) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != end) {
            if (buf.size() >= MAX_FIELD_BYTES) {
                throw new IOException("inotifywait field exceeds " + MAX_FIELD_BYTES + " bytes");
            }
            buf.write(b);
        }
        return b < 0 && buf.size() == 0 ? null : buf.toString(StandardCharsets.UTF_8);
    }
}
