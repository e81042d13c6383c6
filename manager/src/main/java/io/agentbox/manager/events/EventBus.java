package io.agentbox.manager.events;

import io.agentbox.mux.util.DaemonThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's in-process event bus (what {@code GET /v1/events} streams): producers
 * {@link #publish} without ever blocking; one dispatcher thread renders each event once (if
 * anybody wants it) and queues it for every {@link Subscription} whose filter takes it, in publish
 * order.
 *
 * <p>Limits: at most {@code maxSubscribers} subscriptions, {@code maxPerTeam} of one team
 * ({@link LimitReached} beyond); each queues at most {@code queueCapacity} events and is dropped
 * beyond (a slow reader loses its stream, never the producers their time); at most
 * {@value #MAX_PENDING} events wait for the dispatcher, and when they overflow every subscription
 * is dropped (they all missed events).
 *
 * <p>Lifecycle: {@link #close()} ends every subscription ({@link Subscription.State#CLOSED}), waits
 * up to {@value #CLOSE_GRACE_MS} ms for their streams to end, and stops the dispatcher; later
 * publishes are ignored and later subscribes refused.
 */
public final class EventBus implements AutoCloseable {
    public static final int DEFAULT_MAX_SUBSCRIBERS = 256;
    public static final int DEFAULT_MAX_PER_TEAM = 16;
    public static final int DEFAULT_QUEUE_CAPACITY = 1024;
    static final int MAX_PENDING = 65_536;
    static final long CLOSE_GRACE_MS = 500;
    private static final Logger log = LoggerFactory.getLogger(EventBus.class);
    private static final HubEvent STOP = new HubEvent("stop", null, () -> null);

    /** A subscribe over a limit (the HTTP surface answers 429). */
    public static final class LimitReached extends RuntimeException {
        LimitReached(String message) {
            super(message, null, false, false);
        }
    }

    private final int maxSubscribers;
    private final int maxPerTeam;
    private final int queueCapacity;
    private final List<Subscription> subscribers = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> perTeam = new ConcurrentHashMap<>();
    private final BlockingQueue<HubEvent> pending = new ArrayBlockingQueue<>(MAX_PENDING);
    private final Thread dispatcher;
    private volatile boolean closed;

    public EventBus() {
        this(DEFAULT_MAX_SUBSCRIBERS, DEFAULT_MAX_PER_TEAM, DEFAULT_QUEUE_CAPACITY);
    }

    public EventBus(int maxSubscribers, int maxPerTeam, int queueCapacity) {
        if (maxSubscribers < 1 || maxPerTeam < 1 || queueCapacity < 1) {
            throw new IllegalArgumentException("event bus limits must be positive");
        }
        this.maxSubscribers = maxSubscribers;
        this.maxPerTeam = maxPerTeam;
        this.queueCapacity = queueCapacity;
        this.dispatcher = DaemonThreads.start("agentbox-events", this::dispatch);
    }

    /** Whether anybody listens (producers may skip building events when not). */
    public boolean hasSubscribers() {
        return !subscribers.isEmpty();
    }

    /** Hands {@code e} to the dispatcher; never blocks. Ignored while nobody listens. */
    public void publish(HubEvent e) {
        if (closed || subscribers.isEmpty()) {
            return;
        }
        if (!pending.offer(e)) {
            log.warn("more than {} events wait for dispatch; dropping every event subscriber", MAX_PENDING);
            pending.clear();
            subscribers.forEach(s -> s.end(Subscription.State.DROPPED));
        }
    }

    /**
     * Subscribes to the events {@code wants} takes.
     *
     * @param team    the subscriber's team, for the per-team limit
     * @param onReady see {@link Subscription}; it first runs after the first {@link Subscription#poll} that finds nothing
     * @throws LimitReached over a subscriber limit, or once closed
     */
    public Subscription subscribe(String team, Predicate<HubEvent> wants, Runnable onReady) {
        Subscription s = new Subscription(this, team, wants, queueCapacity, onReady);
        synchronized (this) {
            if (closed) {
                throw new LimitReached("the hub is shutting down");
            }
            if (subscribers.size() >= maxSubscribers) {
                throw new LimitReached("the hub serves at most " + maxSubscribers + " event streams at once");
            }
            if (perTeam.getOrDefault(team, 0) >= maxPerTeam) {
                throw new LimitReached("team '" + team + "' has " + maxPerTeam + " event streams open already (the most at once)");
            }
            perTeam.merge(team, 1, Integer::sum);
            subscribers.add(s);
        }
        return s;
    }

    synchronized void remove(Subscription s) {
        if (subscribers.remove(s)) {
            perTeam.computeIfPresent(s.team, (t, n) -> n <= 1 ? null : n - 1);
            notifyAll();
        }
    }

    /** Most events one subscription queues. */
    public int queueCapacity() {
        return queueCapacity;
    }

    /** How many subscriptions are open. */
    public int subscriberCount() {
        return subscribers.size();
    }

    private void dispatch() {
        while (true) {
            HubEvent e;
            try {
                e = pending.take();
            } catch (InterruptedException x) {
                return;
            }
            if (e == STOP) {
                return;
            }
            List<Subscription> to = new ArrayList<>();
            for (Subscription s : subscribers) {
                if (s.wants.test(e)) {
                    to.add(s);
                }
            }
            if (to.isEmpty()) {
                continue;
            }
            try {
                e.data(); // rendered once, here, for all of them
            } catch (RuntimeException x) {
                log.warn("cannot render a {} event; it is skipped", e.name(), x);
                continue;
            }
            to.forEach(s -> s.offer(e));
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        subscribers.forEach(s -> s.end(Subscription.State.CLOSED));
        long deadline = System.currentTimeMillis() + CLOSE_GRACE_MS;
        synchronized (this) {
            long left;
            while (!subscribers.isEmpty() && (left = deadline - System.currentTimeMillis()) > 0) {
                try {
                    wait(left);
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        pending.clear();
        pending.offer(STOP);
    }
}
