package io.agentbox.manager.envd;

import com.google.protobuf.Message;
import io.agentbox.protocol.envd.EnvdFilesystem;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.protocol.v1.WatchDirRequest;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * envd's polling watch API ({@code CreateWatcher}, {@code GetWatcherEvents},
 * {@code RemoveWatcher}; docs/e2b-wire.md#watching-a-directory), used by the Python SDK's synchronous
 * {@code watch_dir}: each watcher is a worker {@code WatchDir} stream held by this hub, its events
 * buffered until polled.
 *
 * <p>Limits: {@link #MAX_PER_SANDBOX} watchers per sandbox; {@link #MAX_EVENTS} buffered events
 * per watcher (beyond, the watcher fails with {@code resource_exhausted} on the next poll); a
 * watcher not polled for {@link #IDLE_MS} is removed. Watchers live in one hub process: behind
 * several hub replicas the client must stick to one.
 */
final class Watchers {
    static final int MAX_PER_SANDBOX = 16;
    static final int MAX_EVENTS = 1_000;
    static final long IDLE_MS = 10 * 60_000;
    static final long START_TIMEOUT_MS = 15_000;

    private final EnvdContext ctx;
    private final Map<String, Watcher> byId = new ConcurrentHashMap<>();

    Watchers(EnvdContext ctx) {
        this.ctx = ctx;
        ctx.timer.scheduleWithFixedDelay(this::expireIdle, 60, 60, TimeUnit.SECONDS);
    }

    /** One watcher: the worker stream and its unread events. */
    private static final class Watcher implements StreamObserver<WatchDirEvent> {
        final String sandboxId;
        final Context.CancellableContext call = Context.current().withCancellation();
        final CompletableFuture<Void> started = new CompletableFuture<>();
        // guarded by this
        final ArrayDeque<EnvdFilesystem.FilesystemEvent> events = new ArrayDeque<>();
        Status ended;
        boolean overflow;
        long lastPolledMs = System.currentTimeMillis();

        Watcher(String sandboxId) {
            this.sandboxId = sandboxId;
        }

        @Override
        public void onNext(WatchDirEvent ev) {
            if (ev.hasStarted()) {
                started.complete(null);
                return;
            }
            EnvdFilesystem.FilesystemEvent event = ev.hasFs() ? EnvdJson.filesystemEvent(ev.getFs()) : null;
            if (event == null) {
                return;
            }
            synchronized (this) {
                if (events.size() >= MAX_EVENTS) {
                    overflow = true;
                    call.cancel(null);
                    return;
                }
                events.add(event);
            }
        }

        @Override
        public void onError(Throwable t) {
            started.completeExceptionally(t);
            synchronized (this) {
                ended = Status.fromThrowable(t);
            }
        }

        @Override
        public void onCompleted() {
            synchronized (this) {
                ended = Status.OK;
            }
        }
    }

    /** {@code CreateWatcher {"path","recursive"}} → {@code {"watcherId"}} once the watch is in place. */
    Message create(SandboxTarget t, byte[] body) {
        EnvdFilesystem.CreateWatcherRequest req = EnvdCodec.parse(body, EnvdFilesystem.CreateWatcherRequest.newBuilder())
                .build();
        long mine = byId.values().stream().filter(w -> w.sandboxId.equals(t.sandboxId())).count();
        if (mine >= MAX_PER_SANDBOX) {
            throw ConnectError.of(ConnectError.RESOURCE_EXHAUSTED, "sandbox " + t.sandboxId() + " already has "
                    + MAX_PER_SANDBOX + " watchers; remove one with RemoveWatcher").toException();
        }
        WatchDirRequest r = WatchDirRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user())
                .setPath(FilesystemService.path(req.getPath(), "path")).setRecursive(req.getRecursive()).build();
        Watcher w = new Watcher(t.sandboxId());
        w.call.run(() -> FilesystemServiceGrpc.newStub(t.channel()).watchDir(r, w));
        try {
            w.started.get(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            w.call.cancel(null);
            throw ctx.rpcError(t, Status.fromThrowable(e.getCause()).asRuntimeException(Status.trailersFromThrowable(e.getCause())));
        } catch (TimeoutException e) {
            w.call.cancel(null);
            throw ConnectError.of(ConnectError.UNAVAILABLE, "the watch did not start within " + START_TIMEOUT_MS + " ms").toException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            w.call.cancel(e);
            throw ConnectError.of(ConnectError.CANCELED, "interrupted").toException();
        }
        String id = UUID.randomUUID().toString();
        byId.put(id, w);
        return EnvdFilesystem.CreateWatcherResponse.newBuilder().setWatcherId(id).build();
    }

    /**
     * {@code GetWatcherEvents {"watcherId"}} → {@code {"events":[{"name","type"}…]}}: the events
     * since the last poll. A watcher whose stream ended returns its last events, then its error
     * (or {@code not_found} after a clean end) and is removed.
     */
    Message events(SandboxTarget t, byte[] body) {
        String id = EnvdCodec.parse(body, EnvdFilesystem.GetWatcherEventsRequest.newBuilder()).getWatcherId();
        Watcher w = find(t, id);
        EnvdFilesystem.GetWatcherEventsResponse.Builder out = EnvdFilesystem.GetWatcherEventsResponse.newBuilder();
        Status ended;
        synchronized (w) {
            w.lastPolledMs = System.currentTimeMillis();
            if (w.overflow) {
                byId.remove(id);
                throw ConnectError.of(ConnectError.RESOURCE_EXHAUSTED, "more than " + MAX_EVENTS
                        + " events were not polled; the watcher was removed").toException();
            }
            out.addAllEvents(w.events);
            w.events.clear();
            ended = w.ended;
        }
        if (ended != null && out.getEventsCount() == 0) {
            byId.remove(id);
            throw ended.isOk()
                    ? ConnectError.of(ConnectError.NOT_FOUND, "watcher " + id + " ended: the directory is gone").toException()
                    : ConnectError.fromGrpc(ended).toException();
        }
        return out.build();
    }

    /** {@code RemoveWatcher {"watcherId"}} → {@code {}}; unknown id → {@code not_found}. */
    Message remove(SandboxTarget t, byte[] body) {
        String id = EnvdCodec.parse(body, EnvdFilesystem.RemoveWatcherRequest.newBuilder()).getWatcherId();
        find(t, id);
        Watcher w = byId.remove(id);
        if (w != null) {
            w.call.cancel(null);
        }
        return EnvdFilesystem.RemoveWatcherResponse.getDefaultInstance();
    }

    private Watcher find(SandboxTarget t, String id) {
        Watcher w = byId.get(id);
        if (w == null || !w.sandboxId.equals(t.sandboxId())) {
            throw ConnectError.of(ConnectError.NOT_FOUND, "watcher '" + id + "' not found").toException();
        }
        return w;
    }

    private void expireIdle() {
        long now = System.currentTimeMillis();
        byId.entrySet().removeIf(e -> {
            boolean idle;
            synchronized (e.getValue()) {
                idle = now - e.getValue().lastPolledMs > IDLE_MS;
            }
            if (idle) {
                e.getValue().call.cancel(null);
            }
            return idle;
        });
    }
}
