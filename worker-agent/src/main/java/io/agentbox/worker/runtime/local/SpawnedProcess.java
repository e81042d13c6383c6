package io.agentbox.worker.runtime.local;

import io.agentbox.mux.util.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A command the sandbox's spawner ({@code spawner.c}, the container's PID 1) forked, over one
 * unix socket connection: the spawner relays the command's stdout and stderr as frames, takes
 * stdin frames and signals, and reports the exit. Behaves as a {@link Process} of the command
 * (exit code, or 128 + the signal that ended it), so the exec service and the file operations use
 * it like a crun exec process.
 *
 * <p>Threading: no thread of its own. Whichever caller needs data ({@link #getInputStream()},
 * {@link #getErrorStream()}, {@link #waitFor()}) reads the next frame from the socket while the
 * others wait, and hands frames for them over; so output reaches a stream's reader without a hop
 * through another thread when that reader is the one waiting. Each stream keeps at most
 * {@link #MAX_QUEUED_BYTES} not yet read; past that nothing more is read from the socket (the
 * spawner then stops reading the command's pipes), as with pipes. Interrupting a thread blocked
 * in a read closes the connection, which makes the spawner kill the command's group.
 *
 * <p>Wire: see spawner.c's header; frame = type byte, big-endian u32 length, payload.
 */
final class SpawnedProcess extends Process {
    static final int FLAG_STDIN = 1;
    static final int FLAG_SETSID = 2;
    static final int FLAG_LOOKUP = 4;
    /** Reason code of an 'F' frame: the cwd cannot be entered. */
    static final int FAIL_CWD = 2;
    /** The spawner's limits (spawner.c MAX_REQUEST, MAX_INPUT). */
    static final int MAX_REQUEST_BYTES = 1 << 20;
    static final int MAX_INPUT_BYTES = 64 * 1024;
    /** Output per stream buffered here until its reader takes it. */
    static final int MAX_QUEUED_BYTES = 1 << 20;
    /** Largest frame the spawner sends (a 32 KiB chunk; failure texts are shorter). */
    private static final int MAX_FRAME_BYTES = 64 * 1024;
    /** How long a fresh sandbox's spawner may take to listen, in ms (it binds right after its exec). */
    private static final long CONNECT_TIMEOUT_MS = 2_000;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("spawn-watchdog"));

    /** What to start. {@code env}: NAME=VALUE, the whole environment; flags: FLAG_*. */
    record Request(List<String> argv, List<String> env, String cwd, int uid, int gid, int flags) {}

    /** The spawner refused or could not start the command. */
    static final class Failed extends Exception {
        final int reason;

        Failed(int reason, String message) {
            super(message);
            this.reason = reason;
        }
    }

    /** Nothing listens on the spawner's socket (root inside the sandbox can remove it). */
    static final class Unreachable extends IOException {
        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final SocketChannel channel;
    private final int pid;
    private final ByteBuffer in = ByteBuffer.allocate(MAX_FRAME_BYTES + 5).flip();
    private final Object state = new Object();
    // guarded by state
    private boolean reading;
    private final Chunks out = new Chunks();
    private final Chunks err = new Chunks();
    private boolean exited;
    private boolean ended; // the connection is done: nothing more comes
    private int exitCode;
    // guarded by writeLock
    private final Object writeLock = new Object();
    private boolean stdinClosed;
    private final OutputStream stdin;
    /** Runs once when the exit is known (guarded by state). */
    private Runnable onExit;

    private SpawnedProcess(SocketChannel channel, int pid, boolean stdinPipe) {
        this.channel = channel;
        this.pid = pid;
        this.stdinClosed = !stdinPipe;
        this.stdin = stdinPipe ? new Stdin() : OutputStream.nullOutputStream();
    }

    /**
     * Connects to the spawner listening at {@code socket}, sends {@code request} and waits until the
     * command runs (its cwd entered, its ids set).
     *
     * @throws Failed when the spawner refused the request or the command could not start
     * @throws Unreachable when nothing listens on {@code socket} within a moment
     * @throws IOException when the connection broke
     */
    static SpawnedProcess start(Path socket, Request request, long startTimeoutMs) throws IOException, Failed {
        SocketChannel ch = connect(socket);
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> closeQuietly(ch), startTimeoutMs, TimeUnit.MILLISECONDS);
        try {
            write(ch, 'R', encode(request));
            ByteBuffer in = ByteBuffer.allocate(MAX_FRAME_BYTES + 5).flip();
            Frame f = readFrame(ch, in);
            if (f == null) {
                throw new IOException("the spawner closed the connection");
            }
            if (f.type == 'F') {
                closeQuietly(ch);
                ByteBuffer b = ByteBuffer.wrap(f.data);
                int reason = b.remaining() >= 4 ? b.getInt() : 0;
                throw new Failed(reason, new String(f.data, 4, Math.max(0, f.data.length - 4), StandardCharsets.UTF_8));
            }
            if (f.type != 'P' || f.data.length != 4) {
                throw new IOException("unexpected frame '" + f.type + "' from the spawner");
            }
            SpawnedProcess p = new SpawnedProcess(ch, ByteBuffer.wrap(f.data).getInt(), (request.flags & FLAG_STDIN) != 0);
            p.in.clear().put(in).flip(); // frames that came with the start
            return p;
        } catch (IOException | Failed | RuntimeException e) {
            closeQuietly(ch);
            if (!watchdog.cancel(false)) {
                throw new IOException("the command did not start within " + startTimeoutMs + " ms");
            }
            throw e;
        } finally {
            watchdog.cancel(false);
        }
    }

    private static SocketChannel connect(Path socket) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONNECT_TIMEOUT_MS);
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(socket);
        while (true) {
            try {
                return SocketChannel.open(address);
            } catch (IOException e) {
                // a sandbox started a moment ago: its spawner may not listen yet
                if (System.nanoTime() > deadline) {
                    throw new Unreachable("cannot reach the sandbox's spawner at " + socket + ": " + e.getMessage(), e);
                }
                LockSupport.parkNanos(200_000);
            }
        }
    }

    static byte[] encode(Request r) {
        ByteBuffer b = ByteBuffer.allocate(sizeOf(r));
        b.putInt(r.flags).putInt(r.uid).putInt(r.gid).putInt(r.argv.size()).putInt(r.env.size());
        putString(b, r.cwd);
        r.argv.forEach(s -> putString(b, s));
        r.env.forEach(s -> putString(b, s));
        return b.array();
    }

    /** Bytes of {@code r}'s request payload; more than {@link #MAX_REQUEST_BYTES} is refused by the spawner. */
    static int sizeOf(Request r) {
        long n = 20 + r.cwd.getBytes(StandardCharsets.UTF_8).length + 1L;
        for (String s : r.argv) {
            n += s.getBytes(StandardCharsets.UTF_8).length + 1L;
        }
        for (String s : r.env) {
            n += s.getBytes(StandardCharsets.UTF_8).length + 1L;
        }
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    private static void putString(ByteBuffer b, String s) {
        b.put(s.getBytes(StandardCharsets.UTF_8)).put((byte) 0);
    }

    /** Runs {@code action} once the exit is known (at once when it is already). */
    void onExit(Runnable action) {
        synchronized (state) {
            if (!exited) {
                onExit = action;
                return;
            }
        }
        action.run();
    }

    /** Called holding state when {@code exited} turned true. */
    private void exitKnown() {
        Runnable r = onExit;
        onExit = null;
        if (r != null) {
            r.run();
        }
    }

    /** The command's pid inside the sandbox. */
    int sandboxPid() {
        return pid;
    }

    /** Sends {@code signal} to the command's process group (to it alone without setsid); nothing once it exited. */
    void signal(int signal) {
        synchronized (state) {
            if (exited || ended) {
                return;
            }
        }
        try {
            synchronized (writeLock) {
                write(channel, 'K', ByteBuffer.allocate(4).putInt(signal).array());
            }
        } catch (IOException e) {
            // the connection is gone: the spawner killed the command
        }
    }

    @Override
    public OutputStream getOutputStream() {
        return stdin;
    }

    @Override
    public InputStream getInputStream() {
        return out;
    }

    @Override
    public InputStream getErrorStream() {
        return err;
    }

    @Override
    public int waitFor() throws InterruptedException {
        while (true) {
            synchronized (state) {
                if (exited) {
                    return exitCode;
                }
            }
            if (!step(Long.MAX_VALUE)) {
                synchronized (state) {
                    return exitCode;
                }
            }
        }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (true) {
            synchronized (state) {
                if (exited) {
                    return true;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            step(left);
        }
    }

    @Override
    public int exitValue() {
        synchronized (state) {
            if (!exited) {
                throw new IllegalThreadStateException("process " + pid + " has not exited");
            }
            return exitCode;
        }
    }

    @Override
    public boolean isAlive() {
        synchronized (state) {
            return !exited;
        }
    }

    /** SIGKILL to the command's group; the exit still comes from the spawner. */
    @Override
    public void destroy() {
        signal(9);
    }

    @Override
    public Process destroyForcibly() {
        signal(9);
        return this;
    }

    @Override
    public String toString() {
        return "SpawnedProcess[pid=" + pid + "]";
    }

    /**
     * Reads and routes one frame, or waits up to {@code waitNanos} while another thread does.
     *
     * @return false when the connection ended (nothing more will come)
     */
    private boolean step(long waitNanos) throws InterruptedException {
        synchronized (state) {
            if (ended) {
                return false;
            }
            if (reading || out.full() || err.full()) {
                long ms = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(waitNanos), 60_000));
                state.wait(ms);
                return !ended;
            }
            reading = true;
        }
        Frame f = null;
        try {
            f = readFrame(channel, in);
        } catch (IOException e) {
            f = null;
        } finally {
            synchronized (state) {
                reading = false;
                route(f);
                state.notifyAll();
            }
        }
        if (ended) {
            closeQuietly(channel);
        }
        return true;
    }

    /** Called holding state; null: the connection ended. */
    private void route(Frame f) {
        if (f == null) {
            if (!exited) {
                exited = true;
                exitCode = 128 + 9; // the sandbox (and its spawner) went away
                exitKnown();
            }
            out.end();
            err.end();
            ended = true;
            return;
        }
        switch (f.type) {
            case 'O' -> out.add(f.data);
            case 'E' -> err.add(f.data);
            case 'o' -> out.end();
            case 'e' -> err.end();
            case 'X' -> {
                exitCode = ByteBuffer.wrap(f.data, 1, 4).getInt();
                exited = true;
                exitKnown();
            }
            default -> { // 'F' after the start: a protocol error; the spawner killed the command
                if (!exited) {
                    exited = true;
                    exitCode = 128 + 9;
                    exitKnown();
                }
                out.end();
                err.end();
            }
        }
        if (exited && out.ended && err.ended) {
            ended = true;
        }
    }

    private record Frame(char type, byte[] data) {}

    /** One frame from {@code ch}, buffered in {@code buf} (in read mode); null at the end of the connection. */
    private static Frame readFrame(SocketChannel ch, ByteBuffer buf) throws IOException {
        if (!fill(ch, buf, 5)) {
            return null;
        }
        char type = (char) buf.get(buf.position());
        int len = buf.getInt(buf.position() + 1);
        if (len < 0 || len > MAX_FRAME_BYTES) {
            throw new IOException("frame of " + len + " bytes from the spawner");
        }
        if (!fill(ch, buf, 5 + len)) {
            return null;
        }
        buf.position(buf.position() + 5);
        byte[] data = new byte[len];
        buf.get(data);
        return new Frame(type, data);
    }

    /** Reads until {@code buf} holds {@code n} bytes; false at the end of the connection. */
    private static boolean fill(SocketChannel ch, ByteBuffer buf, int n) throws IOException {
        while (buf.remaining() < n) {
            buf.compact();
            int r = ch.read(buf);
            buf.flip();
            if (r < 0) {
                return false;
            }
        }
        return true;
    }

    private static void write(SocketChannel ch, char type, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(5 + payload.length);
        b.put((byte) type).putInt(payload.length).put(payload).flip();
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    /** Output of one stream not read yet. Fields guarded by {@code state}. */
    private final class Chunks extends InputStream {
        private final ArrayDeque<byte[]> chunks = new ArrayDeque<>();
        private int headOffset;
        private long queued;
        private boolean ended;
        private boolean closed;

        void add(byte[] data) {
            if (!closed && data.length > 0) {
                chunks.addLast(data);
                queued += data.length;
            }
        }

        void end() {
            ended = true;
        }

        boolean full() {
            return queued >= MAX_QUEUED_BYTES;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            try {
                while (true) {
                    synchronized (state) {
                        if (!chunks.isEmpty()) {
                            return take(b, off, len);
                        }
                        if (ended || closed) {
                            return -1;
                        }
                    }
                    step(Long.MAX_VALUE);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while reading process output");
            }
        }

        /** Called holding state with at least one chunk. */
        private int take(byte[] b, int off, int len) {
            int n = 0;
            while (n < len && !chunks.isEmpty()) {
                byte[] head = chunks.peekFirst();
                int k = Math.min(len - n, head.length - headOffset);
                System.arraycopy(head, headOffset, b, off + n, k);
                n += k;
                headOffset += k;
                if (headOffset == head.length) {
                    chunks.removeFirst();
                    headOffset = 0;
                }
            }
            queued -= n;
            if (queued < MAX_QUEUED_BYTES) {
                state.notifyAll();
            }
            return n;
        }

        @Override
        public int available() {
            synchronized (state) {
                long n = queued;
                return (int) Math.min(n, Integer.MAX_VALUE);
            }
        }

        @Override
        public void close() {
            synchronized (state) {
                closed = true;
                chunks.clear();
                queued = 0;
                headOffset = 0;
                state.notifyAll();
            }
        }
    }

    /** The command's stdin: 'I' frames of at most {@link #MAX_INPUT_BYTES}; close sends 'C'. */
    private final class Stdin extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            synchronized (writeLock) {
                if (stdinClosed) {
                    throw new IOException("stdin of process " + pid + " is closed");
                }
                for (int i = 0; i < len; i += MAX_INPUT_BYTES) {
                    int n = Math.min(MAX_INPUT_BYTES, len - i);
                    byte[] chunk = new byte[n];
                    System.arraycopy(b, off + i, chunk, 0, n);
                    SpawnedProcess.write(channel, 'I', chunk);
                }
            }
        }

        @Override
        public void close() throws IOException {
            synchronized (writeLock) {
                if (stdinClosed) {
                    return;
                }
                stdinClosed = true;
                try {
                    SpawnedProcess.write(channel, 'C', new byte[0]);
                } catch (IOException e) {
                    // the command is gone already
                }
            }
        }
    }

}
