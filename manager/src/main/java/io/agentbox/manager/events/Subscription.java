package io.agentbox.manager.events;

import java.util.ArrayDeque;
import java.util.function.Predicate;

/**
 * One subscriber of an {@link EventBus}: the events it wants wait in a queue of at most
 * {@code capacity} until it {@link #poll}s them. It never blocks the bus: when the queue is full
 * the subscription is {@link State#DROPPED} (its queue emptied; it has missed events and should
 * start over), and on {@link EventBus#close()} it is {@link State#CLOSED}.
 *
 * <p>Threading: {@code onReady} runs (on the dispatcher thread, must not block) exactly once after a
 * {@link #poll} found nothing, when the next event arrives or the subscription ends; so one
 * consumer chain polls at a time. {@link #cancel} (idempotent) leaves the bus.
 */
public final class Subscription {
    public enum State { OPEN, DROPPED, CLOSED }

    private final EventBus bus;
    final String team;
    final Predicate<HubEvent> wants;
    private final int capacity;
    private final Runnable onReady;
    private final ArrayDeque<HubEvent> queue = new ArrayDeque<>();
    private State state = State.OPEN;
    private boolean waiting;

    Subscription(EventBus bus, String team, Predicate<HubEvent> wants, int capacity, Runnable onReady) {
        this.bus = bus;
        this.team = team;
        this.wants = wants;
        this.capacity = capacity;
        this.onReady = onReady;
    }

    /** The next event, or null when none waits: then check {@link #state()}, and wait for {@code onReady}. */
    public synchronized HubEvent poll() {
        HubEvent e = queue.poll();
        if (e == null) {
            waiting = true;
        }
        return e;
    }

    public synchronized State state() {
        return state;
    }

    /** Leaves the bus (the subscriber's stream ended); idempotent. */
    public void cancel() {
        bus.remove(this);
    }

    /** Queues {@code e} (dispatcher thread); a full queue drops the subscription instead. */
    void offer(HubEvent e) {
        boolean signal;
        synchronized (this) {
            if (state != State.OPEN) {
                return;
            }
            if (queue.size() >= capacity) {
                state = State.DROPPED;
                queue.clear();
            } else {
                queue.add(e);
            }
            signal = waiting;
            waiting = false;
        }
        if (signal) {
            onReady.run();
        }
    }

    /** Ends an open subscription as {@code end} (its waiting events are discarded). */
    void end(State end) {
        boolean signal;
        synchronized (this) {
            if (state != State.OPEN) {
                return;
            }
            state = end;
            queue.clear();
            signal = waiting;
            waiting = false;
        }
        if (signal) {
            onReady.run();
        }
    }
}
