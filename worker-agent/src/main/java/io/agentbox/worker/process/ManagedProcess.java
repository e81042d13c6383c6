package io.agentbox.worker.process;

import com.google.protobuf.ByteString;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessStarted;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.TerminalSize;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A running command and its clients. Output is read in chunks of at most {@link #CHUNK_BYTES}
 * as it is produced and fanned out to every attached {@link EventSink}; while no client is
 * attached, up to {@link #BACKLOG_BYTES} of the newest output is kept for the next client that
 * attaches, which gets it only when it asks to replay (envd streams only new output unless a
 * Connect request asks for a replay). A client that stays over its queue limit for
 * {@link #SLOW_CLIENT_MS} is dropped so it cannot stall the process.
 *
 * <p>Event order per client: {@code started}, output, exactly one {@code exited}.
 */
public final class ManagedProcess {
    public static final int CHUNK_BYTES = 32 * 1024;
    public static final long BACKLOG_BYTES = 1024 * 1024;
    public static final long SLOW_CLIENT_MS = 30_000;
    /** After the command exits, how long to wait for output still in the pipes. */
    static final long DRAIN_AFTER_EXIT_MS = 2_000;

    static final ExecutorService THREAD_POOL = Executors.newCachedThreadPool(DaemonThreads.numbered("process-io"));

    private final LaunchedProcess process;
    private final ProcessConfig config;
    private final String tag;
    private final ExecEvent startedEvent;
    private final OutputStream stdin;
    private final CompletableFuture<ProcessExited> exit = new CompletableFuture<>();

    private final Object lock = new Object();
    // guarded by lock
    private final List<EventSink> sinks = new ArrayList<>();
    private final ArrayDeque<ExecEvent> backlog = new ArrayDeque<>();
    private long backlogBytes;
    private boolean ended;
    private boolean stdinClosed;

    private volatile int sentSignal;

    private ManagedProcess(LaunchedProcess process, ProcessConfig config, String tag) {
        this.process = process;
        this.config = config;
        this.tag = tag;
        this.stdin = process.stdin();
        this.stdinClosed = stdin == null;
        this.startedEvent = ExecEvent.newBuilder()
                .setStarted(ProcessStarted.newBuilder().setPid(process.pid())).build();
    }

    /**
     * Starts forwarding output of an already launched process.
     *
     * @param first receives {@code started} before any output (may be null: nobody attached yet)
     * @param register runs before any event goes out, so that a client acting on {@code started}
     *     (stdin, a signal) finds the process
     * @param onExit called once after {@code exited} was queued to every client
     */
    static ManagedProcess start(LaunchedProcess process, ProcessConfig config, String tag, EventSink first,
                                Consumer<ManagedProcess> register, Consumer<ManagedProcess> onExit) {
        ManagedProcess p = new ManagedProcess(process, config, tag);
        register.accept(p);
        if (first != null) {
            first.enqueue(p.startedEvent);
            p.sinks.add(first);
        }
        CountDownLatch readers = new CountDownLatch(2);
        THREAD_POOL.execute(() -> p.pump(process.stdout(), true, readers));
        THREAD_POOL.execute(() -> p.pump(process.stderr(), false, readers));
        THREAD_POOL.execute(() -> p.awaitExit(readers, onExit));
        return p;
    }

    public int pid() {
        return process.pid();
    }

    public String tag() {
        return tag;
    }

    public ProcessInfo info() {
        ProcessInfo.Builder b = ProcessInfo.newBuilder().setPid(pid()).setConfig(config);
        if (tag != null) {
            b.setTag(tag);
        }
        return b.build();
    }

    /** Completes with the exit once the process ended and its output was forwarded. */
    public CompletableFuture<ProcessExited> exit() {
        return exit;
    }

    /**
     * Attaches a client: it gets {@code started}, with {@code replay} the output kept while nobody
     * was attached (at most {@link #BACKLOG_BYTES}), then live output and {@code exited}. Either
     * way the kept output is gone afterwards, so a later replay never mixes output from before
     * this client with output after it.
     *
     * @return false when the process already ended
     */
    public boolean attach(EventSink sink, boolean replay) {
        synchronized (lock) {
            if (ended) {
                return false;
            }
            sink.enqueue(startedEvent);
            if (replay) {
                for (ExecEvent e : backlog) {
                    sink.enqueue(e);
                }
            }
            backlog.clear();
            backlogBytes = 0;
            sinks.add(sink);
            return true;
        }
    }

    public void detach(EventSink sink) {
        synchronized (lock) {
            sinks.remove(sink);
        }
    }

    /** @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION without an open stdin pipe */
    public void writeStdin(byte[] data) {
        synchronized (lock) {
            if (stdinClosed) {
                throw Status.FAILED_PRECONDITION.withDescription("process " + pid() + " has no open stdin "
                        + "(start it with stdin = true)").asRuntimeException();
            }
            try {
                stdin.write(data);
                stdin.flush();
            } catch (IOException e) {
                throw Status.FAILED_PRECONDITION.withDescription("stdin of process " + pid() + " is closed: "
                        + e.getMessage()).asRuntimeException();
            }
        }
    }

    public void closeStdin() {
        synchronized (lock) {
            if (stdinClosed) {
                return;
            }
            stdinClosed = true;
            try {
                stdin.close();
            } catch (IOException ignored) {
                // already gone with the process
            }
        }
    }

    /** Sends a signal (9, 15) to the process group of the command. */
    public void signal(int signal) {
        sentSignal = signal;
        process.signalGroup(signal);
    }

    /** @throws io.grpc.StatusRuntimeException FAILED_PRECONDITION when the process has no pty */
    public void resize(TerminalSize size) {
        process.resize(size);
    }

    public boolean isRunning() {
        synchronized (lock) {
            return !ended;
        }
    }

    private void pump(InputStream in, boolean isStdout, CountDownLatch done) {
        byte[] buf = new byte[CHUNK_BYTES];
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                ByteString data = ByteString.copyFrom(buf, 0, n);
                ExecEvent.Builder e = ExecEvent.newBuilder();
                publish((!isStdout ? e.setStderr(data) : process.isPty() ? e.setPty(data) : e.setStdout(data)).build(), n);
            }
        } catch (IOException ignored) {
            // stream closed: the process is gone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            done.countDown();
        }
    }

    private void publish(ExecEvent event, int size) throws InterruptedException {
        List<EventSink> targets;
        synchronized (lock) {
            if (ended) {
                return; // output of leftover children after the exit was reported
            }
            if (sinks.isEmpty()) {
                backlog.addLast(event);
                backlogBytes += size;
                while (backlogBytes > BACKLOG_BYTES && !backlog.isEmpty()) {
                    backlogBytes -= backlog.removeFirst().getSerializedSize();
                }
                return;
            }
            targets = List.copyOf(sinks);
            for (EventSink s : targets) {
                s.enqueue(event);
            }
        }
        for (EventSink s : targets) {
            if (!s.awaitCapacity(SLOW_CLIENT_MS)) {
                detach(s);
                s.abandon("client did not read output of process " + pid() + " for " + SLOW_CLIENT_MS + " ms");
            }
        }
    }

    private void awaitExit(CountDownLatch readers, Consumer<ManagedProcess> onExit) {
        int value;
        try {
            value = process.waitFor();
            // output still in the pipes belongs before `exited`; background children that keep
            // the pipes open must not hold the exit back forever
            readers.await(DRAIN_AFTER_EXIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            value = 128 + 9;
        }
        ProcessExited exited = ExitStatus.of(value, sentSignal);
        ExecEvent event = ExecEvent.newBuilder().setExited(exited).build();
        synchronized (lock) {
            ended = true;
            for (EventSink s : sinks) {
                s.enqueue(event);
            }
            sinks.clear();
            backlog.clear();
            backlogBytes = 0;
        }
        closeStdin();
        try {
            onExit.accept(this);
        } finally {
            exit.complete(exited);
        }
    }
}
