package io.agentbox.worker.process;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The running commands of one sandbox, by pid; at most {@link #MAX_PROCESSES} at a time. */
public final class ProcessTable {
    public static final int MAX_PROCESSES = 64;

    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("process-timeouts"));

    private final RuntimeSandbox sandbox;
    private final Map<Integer, ManagedProcess> running = new ConcurrentHashMap<>();
    /** Running plus being launched; bounds threads and pipes per sandbox. */
    private final AtomicInteger slots = new AtomicInteger();

    public ProcessTable(RuntimeSandbox sandbox) {
        this.sandbox = sandbox;
    }

    /**
     * Launches a command and starts forwarding its output.
     *
     * @param first client receiving {@code started} first (null: none)
     * @param timeoutMs kill (SIGKILL) after this many ms; 0 = no limit
     * @throws io.grpc.StatusRuntimeException RESOURCE_EXHAUSTED at {@link #MAX_PROCESSES}, and the
     *     launch errors of {@link RuntimeSandbox#launch}
     */
    public ManagedProcess start(LaunchSpec spec, ProcessConfig config, String tag, EventSink first, long timeoutMs) {
        if (slots.incrementAndGet() > MAX_PROCESSES) {
            slots.decrementAndGet();
            throw ErrorReason.LIMIT_REACHED.exception(Status.Code.RESOURCE_EXHAUSTED, "sandbox " + sandbox.id()
                    + " already runs " + MAX_PROCESSES + " processes");
        }
        LaunchedProcess launched;
        try {
            launched = sandbox.launch(spec);
        } catch (RuntimeException e) {
            slots.decrementAndGet();
            throw e;
        }
        ScheduledFuture<?>[] timer = new ScheduledFuture<?>[1];
        ManagedProcess p;
        // registered before its started event goes out (a client may send stdin at once) and
        // before output flows (a fast exit finds its entry to remove)
        p = ManagedProcess.start(launched, config, tag == null || tag.isEmpty() ? null : tag, first, created -> {
            synchronized (this) {
                running.put(created.pid(), created);
            }
        }, done -> {
            synchronized (this) {
                running.remove(done.pid(), done);
            }
            slots.decrementAndGet();
            if (timer[0] != null) {
                timer[0].cancel(false);
            }
        });
        if (timeoutMs > 0) {
            timer[0] = TIMERS.schedule(() -> p.signal(9), timeoutMs, TimeUnit.MILLISECONDS);
            if (p.exit().isDone()) {
                timer[0].cancel(false);
            }
        }
        return p;
    }

    /** @throws io.grpc.StatusRuntimeException NOT_FOUND when no running process matches */
    public ManagedProcess find(ProcessRef ref) {
        ManagedProcess p = switch (ref.getSelectorCase()) {
            case PID -> running.get(ref.getPid());
            case TAG -> running.values().stream().filter(x -> ref.getTag().equals(x.tag())).findFirst().orElse(null);
            default -> throw Status.INVALID_ARGUMENT.withDescription("process selector (pid or tag) is required")
                    .asRuntimeException();
        };
        if (p == null || !p.isRunning()) {
            String what = ref.getSelectorCase() == ProcessRef.SelectorCase.PID ? "pid " + ref.getPid()
                    : "tag '" + ref.getTag() + "'";
            throw ErrorReason.PROCESS_NOT_FOUND.exception(Status.Code.NOT_FOUND, "process with " + what
                    + " not found in sandbox " + sandbox.id());
        }
        return p;
    }

    public List<ProcessInfo> list() {
        List<ManagedProcess> ps = new ArrayList<>(running.values());
        ps.sort(Comparator.comparingInt(ManagedProcess::pid));
        List<ProcessInfo> out = new ArrayList<>(ps.size());
        for (ManagedProcess p : ps) {
            if (p.isRunning()) {
                out.add(p.info());
            }
        }
        return out;
    }
}
