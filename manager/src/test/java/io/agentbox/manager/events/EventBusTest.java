package io.agentbox.manager.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.IntNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventBusTest {
    static final Duration T = Duration.ofSeconds(10);

    static HubEvent event(String team, int n) {
        return new HubEvent("sandbox", team, () -> IntNode.valueOf(n));
    }

    /** A consumer that takes every event as soon as it is ready, in a chain as Subscription documents. */
    static final class Reader {
        final List<Integer> got = new CopyOnWriteArrayList<>();
        volatile Subscription sub;

        void pump() {
            HubEvent e;
            while ((e = sub.poll()) != null) {
                got.add(e.data().asInt());
            }
        }
    }

    static Reader read(EventBus bus, String team, java.util.function.Predicate<HubEvent> wants) {
        Reader r = new Reader();
        r.sub = bus.subscribe(team, wants, r::pump);
        r.pump();
        return r;
    }

    @Test
    void subscribersGetTheEventsTheyWantInPublishOrder() {
        try (EventBus bus = new EventBus()) {
            Reader alice = read(bus, "alice", e -> "alice".equals(e.team()));
            Reader all = read(bus, "admin", e -> true);
            for (int i = 0; i < 500; i++) {
                bus.publish(event(i % 2 == 0 ? "alice" : "bob", i));
            }
            await().atMost(T).until(() -> all.got.size() == 500);
            assertThat(all.got).isSorted().hasSize(500);
            await().atMost(T).until(() -> alice.got.size() == 250);
            assertThat(alice.got).isSorted().allMatch(n -> n % 2 == 0);
        }
    }

    @Test
    void aSubscriberThatDoesNotReadIsDroppedAndNeverBlocksThePublisher() {
        try (EventBus bus = new EventBus(10, 10, 8)) {
            AtomicInteger signals = new AtomicInteger();
            Subscription slow = bus.subscribe("t", e -> true, signals::incrementAndGet);
            assertThat(slow.poll()).isNull(); // now waiting: the next event signals once
            Reader fast = read(bus, "t", e -> true);
            long start = System.nanoTime();
            for (int i = 0; i < 10_000; i++) {
                bus.publish(event("t", i));
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            await().atMost(T).until(() -> slow.state() == Subscription.State.DROPPED);
            await().atMost(T).until(() -> fast.got.size() == 10_000 || fast.sub.state() != Subscription.State.OPEN);
            assertThat(signals.get()).as("one signal for the first event, none after").isEqualTo(1);
            assertThat(slow.poll()).as("a dropped subscription's queue is emptied").isNull();
            slow.cancel();
            assertThat(bus.subscriberCount()).isEqualTo(1);
        }
    }

    @Test
    void subscriberLimitsAreEnforcedPerTeamAndInAllAndFreedOnCancel() {
        try (EventBus bus = new EventBus(3, 2, 8)) {
            Subscription a1 = bus.subscribe("a", e -> true, () -> { });
            bus.subscribe("a", e -> true, () -> { });
            assertThatThrownBy(() -> bus.subscribe("a", e -> true, () -> { })).isInstanceOf(EventBus.LimitReached.class)
                    .hasMessageContaining("team 'a'");
            bus.subscribe("b", e -> true, () -> { });
            assertThatThrownBy(() -> bus.subscribe("c", e -> true, () -> { })).isInstanceOf(EventBus.LimitReached.class)
                    .hasMessageContaining("at most 3");
            a1.cancel();
            a1.cancel(); // idempotent: frees one slot only
            bus.subscribe("a", e -> true, () -> { });
            assertThat(bus.subscriberCount()).isEqualTo(3);
        }
    }

    @Test
    void closeEndsEverySubscriptionAndWaitsForThemToLeave() {
        EventBus bus = new EventBus();
        AtomicInteger signals = new AtomicInteger();
        Subscription[] s = new Subscription[1];
        s[0] = bus.subscribe("t", e -> true, () -> {
            signals.incrementAndGet();
            if (s[0].poll() == null && s[0].state() == Subscription.State.CLOSED) {
                s[0].cancel();
            }
        });
        assertThat(s[0].poll()).isNull();
        bus.close();
        assertThat(s[0].state()).isEqualTo(Subscription.State.CLOSED);
        assertThat(signals.get()).isEqualTo(1);
        assertThat(bus.subscriberCount()).isZero();
        assertThatThrownBy(() -> bus.subscribe("t", e -> true, () -> { })).isInstanceOf(EventBus.LimitReached.class);
    }

    @Test
    void anEventNobodyWantsIsNeverRendered() {
        try (EventBus bus = new EventBus()) {
            Reader r = read(bus, "a", e -> "a".equals(e.team()));
            AtomicInteger renders = new AtomicInteger();
            bus.publish(new HubEvent("sandbox", "b", () -> IntNode.valueOf(renders.incrementAndGet())));
            bus.publish(event("a", 7));
            await().atMost(T).until(() -> r.got.contains(7));
            assertThat(renders.get()).isZero();
        }
    }
}
