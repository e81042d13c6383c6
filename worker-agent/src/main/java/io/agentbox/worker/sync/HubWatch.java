package io.agentbox.worker.sync;

import io.agentbox.mux.MuxSession;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.WatchRequest;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch the worker keeps open to the hub for the life of a tunnel session: asks to resume
 * from its replica's version, applies every event, and re-watches a second after the stream fails
 * while the session is open (a new session starts its own watch).
 *
 * @param <E> event message (TemplateEvent, ApiKeyEvent, ConfigEvent)
 * @param <T> item type
 */
public final class HubWatch<E, T> {
    private static final Logger log = LoggerFactory.getLogger(HubWatch.class);
    private static final long REWATCH_DELAY_MS = 1000;

    private final String clusterId;
    private final WatchReplica<T> replica;
    private final BiConsumer<WatchRequest, StreamObserver<E>> call;
    private final Function<E, EventType> type;
    private final Function<E, Long> version;
    private final Function<E, List<T>> items;
    private final ScheduledExecutorService timers;

    /**
     * @param call starts the server stream, e.g. {@code stub.withWaitForReady()::watchTemplates}
     */
    public HubWatch(String clusterId, WatchReplica<T> replica, BiConsumer<WatchRequest, StreamObserver<E>> call,
            Function<E, EventType> type, Function<E, Long> version, Function<E, List<T>> items,
            ScheduledExecutorService timers) {
        this.clusterId = clusterId;
        this.replica = replica;
        this.call = call;
        this.type = type;
        this.version = version;
        this.items = items;
        this.timers = timers;
    }

    /** Opens the watch on {@code session}'s behalf; it ends with the session. */
    public void start(MuxSession session) {
        WatchRequest request = WatchRequest.newBuilder().setClusterId(clusterId).setResourceVersion(replica.version()).build();
        call.accept(request, new StreamObserver<>() {
            @Override
            public void onNext(E event) {
                replica.apply(type.apply(event), version.apply(event), items.apply(event));
            }

            @Override
            public void onError(Throwable t) {
                if (session.isOpen()) {
                    log.warn("{} watch failed ({}); rewatching in {} ms", replica.name(), t.toString(), REWATCH_DELAY_MS);
                    try {
                        timers.schedule(() -> start(session), REWATCH_DELAY_MS, TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException closing) {
                        // the worker is shutting down
                    }
                }
            }

            @Override
            public void onCompleted() {
                onError(new IllegalStateException("hub ended the watch"));
            }
        });
    }
}
