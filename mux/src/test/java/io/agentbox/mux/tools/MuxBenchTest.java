package io.agentbox.mux.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.mux.MuxConfig;
import io.netty.channel.Channel;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * MuxBench against MuxEchoServer over real loopback WebSockets (Netty and Jetty, and each client
 * against the other's server), at tiny sizes; no timing thresholds.
 */
class MuxBenchTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private MuxEchoServer server;

    private MuxEchoServer start(WebSocketLibrary library) throws Exception {
        server = MuxEchoServer.start("127.0.0.1", 0, MuxConfig.defaults(), library);
        return server;
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void throughputEchoesEveryByteOfEveryStreamAndLatencyPercentilesAreOrdered(WebSocketLibrary library) throws Exception {
        start(library);
        try (MuxBench bench = MuxBench.connect(server.uri(), MuxConfig.defaults(), TIMEOUT, library)) {
            // 300 KiB per stream: more than one 256 KiB window, so window updates must flow both ways
            MuxBenchResult r = bench.run(4, 300 * 1024, 5, 50, null);

            assertThat(r.throughput().streams()).isEqualTo(4);
            assertThat(r.throughput().bytesEchoed()).isEqualTo(4L * 300 * 1024);
            assertThat(r.throughput().elapsedNanos()).isPositive();
            assertThat(r.throughput().mbPerSecond()).isPositive();

            MuxBenchResult.Latency l = r.latency();
            assertThat(l.samples()).isEqualTo(50);
            assertThat(l.minNanos()).isPositive();
            assertThat(l.p50Nanos()).isGreaterThanOrEqualTo(l.minNanos());
            assertThat(l.p99Nanos()).isGreaterThanOrEqualTo(l.p50Nanos());
            assertThat(l.maxNanos()).isGreaterThanOrEqualTo(l.p99Nanos());
            assertThat(l.openP50Nanos()).isPositive().isLessThanOrEqualTo(l.maxNanos());

            assertThat(r.tableRow("loopback")).startsWith("| loopback | 4 | 300 KiB | ").endsWith(" ms |");
            assertThat(MuxBenchResult.tableHeader().lines().count()).isEqualTo(2);
        }
        assertThat(server.bytesEchoed()).isEqualTo(4L * 300 * 1024 + 55);
        assertThat(server.streamsAccepted()).isEqualTo(4 + 55);
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void aOneByteStreamAndAnOddSizeWork(WebSocketLibrary library) throws Exception {
        start(library);
        try (MuxBench bench = MuxBench.connect(server.uri(), MuxConfig.defaults(), TIMEOUT, library)) {
            assertThat(bench.throughput(1, 1, null).bytesEchoed()).isEqualTo(1);
            assertThat(bench.throughput(3, 65 * 1024 + 3, null).bytesEchoed()).isEqualTo(3L * (65 * 1024 + 3));
        }
    }

    @Test
    void eachClientLibraryWorksAgainstTheOtherServer() throws Exception {
        for (WebSocketLibrary serverLibrary : WebSocketLibrary.values()) {
            WebSocketLibrary clientLibrary = serverLibrary == WebSocketLibrary.NETTY ? WebSocketLibrary.JETTY : WebSocketLibrary.NETTY;
            try (MuxEchoServer s = MuxEchoServer.start("127.0.0.1", 0, MuxConfig.defaults(), serverLibrary);
                    MuxBench bench = MuxBench.connect(s.uri(), MuxConfig.defaults(), TIMEOUT, clientLibrary)) {
                assertThat(bench.throughput(2, 300 * 1024, null).bytesEchoed()).isEqualTo(2L * 300 * 1024);
                assertThat(s.bytesEchoed()).isEqualTo(2L * 300 * 1024);
                assertThat(RawWebSocketBench.run(s.rawUri(), 100_000, 64 * 1024, TIMEOUT, clientLibrary).bytesEchoed())
                        .isEqualTo(100_000);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void idleStreamsStayOpenAndAreCountedByTheSession(WebSocketLibrary library) throws Exception {
        start(library);
        try (MuxBench bench = MuxBench.connect(server.uri(), MuxConfig.defaults(), TIMEOUT, library)) {
            List<Channel> idle = bench.openStreams(300); // more than one open batch and the 256 pending-open cap
            assertThat(idle).hasSize(300).allMatch(Channel::isActive);
            assertThat(bench.session().streamCount()).isEqualTo(300);
            idle.forEach(Channel::close);
            Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> bench.session().streamCount() == 0);
        }
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void rawWebSocketBaselineEchoesAllBytes(WebSocketLibrary library) throws Exception {
        start(library);
        MuxBenchResult.Throughput t = RawWebSocketBench.run(server.rawUri(), 1024 * 1024 + 17, 64 * 1024, TIMEOUT, library);
        assertThat(t.bytesEchoed()).isEqualTo(1024 * 1024 + 17);
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void anUnreachableUrlFailsWithOneReadableLine(WebSocketLibrary library) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        URI dead = URI.create("ws://127.0.0.1:" + port + "/mux");
        assertThatThrownBy(() -> MuxBench.connect(dead, MuxConfig.defaults(), Duration.ofSeconds(5), library))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("cannot connect to " + dead + ": ")
                .hasMessageNotContaining("\n");
    }

    @ParameterizedTest
    @EnumSource(WebSocketLibrary.class)
    void aWrongPathFailsToConnectAndNamesTheStatus(WebSocketLibrary library) throws Exception {
        start(library);
        URI wrong = server.uri().resolve("/nope");
        assertThatThrownBy(() -> MuxBench.connect(wrong, MuxConfig.defaults(), Duration.ofSeconds(5), library))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("cannot connect to " + wrong)
                .hasMessageContaining("404");
    }

    @Test
    void sizesParseAndFormat() {
        assertThat(Sizes.parse("64k")).isEqualTo(65536);
        assertThat(Sizes.parse("16MiB")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("1g")).isEqualTo(1L << 30);
        assertThat(Sizes.parse("123")).isEqualTo(123);
        assertThatThrownBy(() -> Sizes.parse("12x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sizes.parse("k")).isInstanceOf(IllegalArgumentException.class);
        assertThat(Sizes.format(300 * 1024)).isEqualTo("300 KiB");
        assertThat(Sizes.format(1536)).isEqualTo("1.5 KiB");
    }
}
