package io.agentbox.manager.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxTransport;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.HubTunnels;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import io.agentbox.wsproxy.sync.HubWatches;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Placement by reported capacity, counting claims between reports; disconnected clusters leave routing. */
class TunnelClusterRouterTest {

    private final HubTunnels tunnels = new HubTunnels("127.0.0.1", 0, new SharedTokenAuthenticator("router-test-token-0123"), HubWatches.empty());
    private final TunnelClusterRouter router = new TunnelClusterRouter(tunnels);

    @AfterEach
    void close() {
        tunnels.close();
    }

    /** A session whose transport discards bytes: enough to count as a connected cluster. */
    private MuxSession connect(String cluster) {
        MuxSession s = MuxSession.start(MuxRole.SERVER, MuxConfig.builder().keepAliveInterval(Duration.ZERO).build(),
                MuxTransport.discarding(), null);
        tunnels.registry().register(cluster, s);
        return s;
    }

    private void report(String cluster, String template, int idle) {
        tunnels.registry().report(cluster, List.of(PoolCapacity.newBuilder().setTemplate(template).setIdle(idle).setCapacity(10).build()));
    }

    @Test
    void aBurstOfClaimsSpreadsByIdleCapacityBetweenReports() {
        MuxSession a = connect("a");
        connect("b");
        connect("c");
        report("a", "base", 6);
        report("b", "base", 3);
        report("c", "other", 9);

        Map<String, Integer> picks = new TreeMap<>();
        for (int i = 0; i < 9; i++) {
            picks.merge(router.pickCluster("base"), 1, Integer::sum);
        }
        assertThat(picks).isEqualTo(Map.of("a", 6, "b", 3));
        // all reported idle sandboxes are claimed: clusters that run the pool still come first
        assertThat(router.pickCluster("base")).isIn("a", "b");

        a.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> !tunnels.registry().isConnected("a"));
        for (int i = 0; i < 20; i++) {
            assertThat(router.pickCluster("base")).isEqualTo("b");
        }
        assertThat(router.channel("a")).isNull();
        assertThat(router.channel("b")).isNotNull();

        report("c", "base", 5); // a fresh report replaces the counted claims
        assertThat(router.pickCluster("base")).isEqualTo("c");
    }

    @Test
    void clustersWhereTheImageIsNotReadyGetNoSandboxesAndTheMessageNamesThem() {
        connect("a");
        connect("b");
        connect("c");
        PoolCapacity.Builder py = PoolCapacity.newBuilder().setTemplate("py").setCapacity(10);
        // the not-ready clusters report more idle sandboxes: only readiness keeps them out
        tunnels.registry().report("a", List.of(py.setIdle(1).setStatus("ready").build()));
        tunnels.registry().report("b", List.of(py.setIdle(9).setStatus("pulling").setStatusMessage("2/3 layers, 5/9 MB").build()));
        tunnels.registry().report("c", List.of(py.setIdle(9).setStatus("error").setStatusMessage("image x: denied").build()));
        for (int i = 0; i < 20; i++) {
            assertThat(router.pickCluster("py")).isEqualTo("a");
        }
        assertThat(router.notReady("py", "x", null)).isNull();
        assertThat(router.notReady("py", "x", "b")).isEqualTo("template 'py' is not ready: pulling x on cluster b: 2/3 layers, 5/9 MB");
        assertThat(router.notReady("py", "x", "c")).isEqualTo("template 'py' is not ready: error on cluster c: image x: denied");

        tunnels.registry().report("a", List.of(py.setIdle(1).setStatus("error").setStatusMessage("image x: gone").build()));
        assertThat(router.pickCluster("py")).isNull();
        assertThat(router.notReady("py", "x", null)).isEqualTo("template 'py' is not ready: pulling x on cluster b: "
                + "2/3 layers, 5/9 MB; error on cluster a: image x: gone; error on cluster c: image x: denied");
        // a worker that reports no status (older) is ready; a template no cluster reports is left to the workers
        tunnels.registry().report("a", List.of(PoolCapacity.newBuilder().setTemplate("py").setIdle(0).build()));
        assertThat(router.pickCluster("py")).isEqualTo("a");
        assertThat(router.notReady("other", "", null)).isNull();
    }

    @Test
    void noConnectedClusterMeansNoPlacement() {
        assertThat(router.pickCluster("base")).isNull();
        assertThat(router.channel("nope")).isNull();
    }

    @Test
    void aClusterWhoseLastReportIsTooOldGetsNoNewSandboxes() throws Exception {
        TunnelClusterRouter quick = new TunnelClusterRouter(tunnels, Duration.ofMillis(500));
        connect("silent");
        connect("healthy");
        report("silent", "base", 100);
        report("healthy", "base", 1);
        assertThat(quick.pickCluster("base")).isEqualTo("silent");
        long end = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (System.nanoTime() < end) { // only "healthy" keeps reporting
            report("healthy", "base", 1);
            Thread.sleep(100);
        }
        for (int i = 0; i < 10; i++) {
            assertThat(quick.pickCluster("base")).isEqualTo("healthy");
        }
        report("silent", "base", 100); // it speaks again
        assertThat(quick.pickCluster("base")).isEqualTo("silent");
    }
}
