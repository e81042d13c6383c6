package io.agentbox.wsproxy.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxTransport;
import io.agentbox.protocol.v1.ClusterConfig;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.ConfigEvent;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateEvent;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.wsproxy.TunnelRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Versioned watches through the real {@link SyncServiceImpl} over in-process gRPC (with gRPC's own
 * flow control): snapshot then changes, resume, fallback to a snapshot, slow watchers, config scoping.
 */
class WatchStreamerTest {

    private static final Duration T = Duration.ofSeconds(10);
    private final HubWatches watches = new HubWatches(new WatchCache<>(Template::getName, 0, List.of(), 16),
            new WatchCache<>(io.agentbox.protocol.v1.ApiKey::getKeyHash), new WatchCache<>(ClusterConfig::getClusterId));
    private Server server;
    private ManagedChannel channel;
    private SyncServiceGrpc.SyncServiceStub stub;

    private static MuxSession idleSession() {
        return MuxSession.start(MuxRole.SERVER, MuxConfig.builder().keepAliveInterval(Duration.ZERO).build(),
                MuxTransport.discarding(), null);
    }

    @BeforeEach
    void start() throws Exception {
        TunnelRegistry registry = new TunnelRegistry(Clock.systemUTC());
        registry.register("c1", idleSession());
        registry.register("c2", idleSession());
        String name = UUID.randomUUID().toString();
        server = InProcessServerBuilder.forName(name).addService(io.grpc.ServerInterceptors.intercept(
                new SyncServiceImpl(registry, watches), new TunnelIdentity(remote -> "c1"))).build().start();
        channel = InProcessChannelBuilder.forName(name).build();
        stub = SyncServiceGrpc.newStub(channel);
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private static Template t(String name, int size) {
        return Template.newBuilder().setName(name).setPoolSize(size).build();
    }

    /** A template watch whose client asks for {@code initial} messages (Integer.MAX_VALUE: unlimited). */
    private final class Watcher implements ClientResponseObserver<WatchRequest, TemplateEvent> {
        final LinkedBlockingQueue<TemplateEvent> events = new LinkedBlockingQueue<>();
        final Map<String, Template> state = new TreeMap<>();
        long version;
        private final int initial;
        volatile ClientCallStreamObserver<WatchRequest> call;

        Watcher(long fromVersion, int initial) {
            this.initial = initial;
            stub.watchTemplates(WatchRequest.newBuilder().setClusterId("c1").setResourceVersion(fromVersion).build(), this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
            call = requestStream;
            if (initial != Integer.MAX_VALUE) {
                requestStream.disableAutoRequestWithInitial(initial);
            }
        }

        @Override
        public void onNext(TemplateEvent e) {
            events.add(e);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }

        TemplateEvent next() throws InterruptedException {
            TemplateEvent e = events.poll(T.toSeconds(), TimeUnit.SECONDS);
            assertThat(e).as("an event within %s", T).isNotNull();
            apply(e);
            return e;
        }

        /** What a worker does with an event (see sync.proto). */
        void apply(TemplateEvent e) {
            assertThat(e.getResourceVersion()).as("versions increase").isGreaterThan(version);
            if (e.getType() == EventType.EVENT_TYPE_SNAPSHOT) {
                state.clear();
            }
            for (Template x : e.getTemplatesList()) {
                if (e.getType() == EventType.EVENT_TYPE_DELETE) {
                    state.remove(x.getName());
                } else {
                    state.put(x.getName(), x);
                }
            }
            version = e.getResourceVersion();
        }
    }

    @Test
    void aNewWatchGetsASnapshotThenEveryChangeInOrder() throws Exception {
        watches.templates().upsert(t("base", 4));
        watches.templates().upsert(t("py", 1));
        Watcher w = new Watcher(0, Integer.MAX_VALUE);
        TemplateEvent snap = w.next();
        assertThat(snap.getType()).isEqualTo(EventType.EVENT_TYPE_SNAPSHOT);
        assertThat(snap.getResourceVersion()).isEqualTo(2);
        assertThat(snap.getTemplatesList()).containsExactly(t("base", 4), t("py", 1));

        watches.templates().upsert(t("py", 3));
        watches.templates().delete("base");
        watches.templates().upsert(t("node", 2));
        assertThat(List.of(w.next(), w.next(), w.next())).extracting(TemplateEvent::getType).containsExactly(
                EventType.EVENT_TYPE_UPSERT, EventType.EVENT_TYPE_DELETE, EventType.EVENT_TYPE_UPSERT);
        assertThat(w.version).isEqualTo(5);
        assertThat(w.state.values()).containsExactlyElementsOf(watches.templates().snapshot().items());
    }

    @Test
    void aWatcherResumingFromARetainedVersionGetsOnlyTheLaterChanges() throws Exception {
        for (int i = 1; i <= 5; i++) {
            watches.templates().upsert(t("t" + i, i));
        }
        Watcher w = new Watcher(3, Integer.MAX_VALUE);
        w.version = 3;
        TemplateEvent a = w.next();
        TemplateEvent b = w.next();
        assertThat(List.of(a, b)).allMatch(e -> e.getType() == EventType.EVENT_TYPE_UPSERT);
        assertThat(List.of(a.getResourceVersion(), b.getResourceVersion())).containsExactly(4L, 5L);
        assertThat(List.of(a.getTemplates(0).getName(), b.getTemplates(0).getName())).containsExactly("t4", "t5");
        assertThat(w.events.poll(300, TimeUnit.MILLISECONDS)).as("nothing else: the watcher is current").isNull();

        Watcher current = new Watcher(5, Integer.MAX_VALUE);
        assertThat(current.events.poll(300, TimeUnit.MILLISECONDS)).as("a current watcher gets nothing until a change").isNull();
        watches.templates().upsert(t("t6", 6));
        assertThat(current.next().getResourceVersion()).isEqualTo(6);
    }

    @Test
    void aWatcherBehindTheRetainedHistoryOrFromAnUnknownVersionGetsASnapshot() throws Exception {
        for (int i = 1; i <= 40; i++) {
            watches.templates().upsert(t("t" + (i % 7), i)); // history keeps 16: versions 25..40, so resuming needs >= 24
        }
        for (long from : new long[] {3, 23, 999}) {
            Watcher w = new Watcher(from, Integer.MAX_VALUE);
            TemplateEvent e = w.next();
            assertThat(e.getType()).as("resume from %d", from).isEqualTo(EventType.EVENT_TYPE_SNAPSHOT);
            assertThat(e.getResourceVersion()).isEqualTo(40);
            assertThat(w.state.values()).containsExactlyElementsOf(watches.templates().snapshot().items());
        }
    }

    @Test
    void aSlowWatcherBlocksNobodyAndCatchesUpWithASnapshotLosingNothing() throws Exception {
        watches.templates().upsert(t("base", 1));
        Watcher slow = new Watcher(0, 1);
        Watcher fast = new Watcher(0, Integer.MAX_VALUE);
        slow.next();
        fast.next();
        // 1,000 changes while the slow watcher asks for nothing: far beyond the 16 retained
        for (int i = 0; i < 1000; i++) {
            watches.templates().upsert(t("t" + (i % 50), i));
        }
        watches.templates().delete("base");
        long last = watches.templates().version();
        while (fast.version < last) {
            fast.next();
        }
        assertThat(fast.state.values()).containsExactlyElementsOf(watches.templates().snapshot().items());
        assertThat(slow.events).isEmpty();

        slow.call.request(Integer.MAX_VALUE);
        while (slow.version < last) {
            slow.next();
        }
        assertThat(slow.state.values()).as("the slow watcher ends with exactly the hub's set")
                .containsExactlyElementsOf(watches.templates().snapshot().items());
        assertThat(slow.state).doesNotContainKey("base");
    }

    private static ClusterConfig config(String cluster, String key, String value) {
        return ClusterConfig.newBuilder().setClusterId(cluster)
                .addEntries(ConfigEntry.newBuilder().setKey(key).setValue(value)).build();
    }

    @Test
    void aConfigWatchGetsOnlyItsOwnClustersWholeConfig() throws Exception {
        watches.clusterConfigs().upsert(config("c1", "host-alias/reg", "10.0.0.1"));
        watches.clusterConfigs().upsert(config("c2", "host-alias/reg", "10.0.0.2"));
        LinkedBlockingQueue<ConfigEvent> events = new LinkedBlockingQueue<>();
        stub.watchConfig(WatchRequest.newBuilder().setClusterId("c1").build(), new io.grpc.stub.StreamObserver<>() {
            public void onNext(ConfigEvent e) { events.add(e); }
            public void onError(Throwable t) {}
            public void onCompleted() {}
        });
        ConfigEvent snap = events.poll(10, TimeUnit.SECONDS);
        assertThat(snap.getType()).isEqualTo(EventType.EVENT_TYPE_SNAPSHOT);
        assertThat(snap.getEntriesList()).containsExactly(ConfigEntry.newBuilder().setKey("host-alias/reg").setValue("10.0.0.1").build());

        watches.clusterConfigs().upsert(config("c2", "x", "not for c1"));
        watches.clusterConfigs().upsert(config("c1", "setting/dns", "1.1.1.1"));
        ConfigEvent next = events.poll(10, TimeUnit.SECONDS);
        assertThat(next.getType()).isEqualTo(EventType.EVENT_TYPE_SNAPSHOT);
        assertThat(next.getResourceVersion()).isEqualTo(4);
        assertThat(next.getEntriesList()).extracting(ConfigEntry::getKey).containsExactly("setting/dns");
        watches.clusterConfigs().delete("c1");
        ConfigEvent gone = events.poll(10, TimeUnit.SECONDS);
        assertThat(gone.getEntriesList()).isEmpty();
        assertThat(gone.getResourceVersion()).isEqualTo(5);
        await().during(Duration.ofMillis(200)).atMost(T).until(events::isEmpty);
    }

    @Test
    void aTemplateNoLongerTargetingTheClusterArrivesAsADelete() throws Exception {
        watches.templates().upsert(t("base", 1));
        watches.templates().upsert(t("gpu", 1).toBuilder().addClusters("c2").build());
        Watcher w = new Watcher(0, Integer.MAX_VALUE);
        assertThat(w.next().getTemplatesList()).extracting(Template::getName).containsExactly("base");
        watches.templates().upsert(t("gpu", 2).toBuilder().addClusters("c1").build());
        TemplateEvent added = w.next();
        assertThat(added.getType()).isEqualTo(EventType.EVENT_TYPE_UPSERT);
        watches.templates().upsert(t("gpu", 2).toBuilder().addClusters("c2").build());
        TemplateEvent removed = w.next();
        assertThat(removed.getType()).isEqualTo(EventType.EVENT_TYPE_DELETE);
        assertThat(removed.getTemplates(0).getName()).isEqualTo("gpu");
        assertThat(w.state).containsOnlyKeys("base");
    }
}
