package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.events.HubEvent;
import io.agentbox.manager.events.Subscription;
import io.agentbox.manager.http.RequestIds;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One {@code GET /v1/events} response: a {@link Subscription} relayed as server-sent events, the
 * next event written only once the previous one was (so the subscription's bounded queue is what
 * a slow client fills). A subscription dropped for a full queue, or closed by the hub's shutdown,
 * ends the stream with {@code event: error {code: "unavailable", message, requestId}}; a client that
 * does not take even that within {@value #DROP_GRACE_SECONDS} s is disconnected. A client that
 * goes away leaves the bus.
 */
final class EventStream {
    static final long DROP_GRACE_SECONDS = 10;

    private final V1Call call;
    private final ScheduledExecutorService timer;
    private final EventBus bus;
    private final Subscription sub;
    private final SseStream sse;

    /** @throws EventBus.LimitReached over a subscriber limit, before anything is written */
    EventStream(V1Call call, EventBus bus, String team, Predicate<HubEvent> wants, ScheduledExecutorService timer) {
        this.call = call;
        this.timer = timer;
        this.bus = bus;
        this.sub = bus.subscribe(team, wants, () -> later(this::pump));
        this.sse = new SseStream(call.request(), call.response(), call.callback(), timer, sub::cancel);
        sse.open();
        later(this::pump);
    }

    /** Writes the next waiting event, or ends the stream once the subscription ended (one chain at a time, see {@link Subscription}). */
    private void pump() {
        HubEvent e = sub.poll();
        if (e != null) {
            sse.event(e.name(), e.data(), () -> later(this::pump)); // via the timer: no recursion through Jetty's callbacks
            return;
        }
        switch (sub.state()) {
            case OPEN -> { } // onReady pumps again
            case DROPPED -> {
                sse.end("error", error("the client read events too slowly (more than " + bus.queueCapacity()
                        + " waited) and missed some; reconnect and reload"), sub::cancel);
                later(() -> sse.abort("event stream dropped"), DROP_GRACE_SECONDS);
            }
            case CLOSED -> sse.end("error", error("the hub is shutting down"), sub::cancel);
        }
    }

    private JsonNode error(String message) {
        return V1Errors.envelope(V1Errors.of(503, message), RequestIds.of(call.request())).get("error");
    }

    private void later(Runnable r) {
        later(r, 0);
    }

    private void later(Runnable r, long seconds) {
        try {
            timer.schedule(r, seconds, TimeUnit.SECONDS);
        } catch (RejectedExecutionException x) {
            sub.cancel(); // the API server stopped: its connections close with it
        }
    }
}
