package io.agentbox.mux.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.MuxStreamChannel;
import io.agentbox.mux.tools.StreamEcho;
import io.agentbox.mux.interop.InteropHandlers.Sink;
import io.agentbox.mux.interop.InteropHandlers.Source;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Interop scenarios between our mux and the real Go hashicorp/yamux ({@link GoPeer}) over a real
 * loopback WebSocket, run once per topology (subclasses) and per window: 256 KiB (the yamux
 * minimum, Go's default) and 4 MiB (Go sends whole-window Data frames). Every scenario runs in
 * both directions on one session: streams the Java side opens (echoed by Go) and streams the Go
 * side opens (echoed by Java), so in each topology both the client and the server side open
 * streams. Go's keepalive pings the Java side every 500 ms throughout, and each scenario ends by
 * checking that the session is still alive, so a late ping ACK or a protocol error shows up.
 */
abstract class GoInteropTestBase {

    static final int SMALL = 256 * 1024;
    static final int LARGE = 4 * 1024 * 1024;
    static final Duration T = Duration.ofSeconds(30);

    /** Streams the Go side opened, as accepted by the Java acceptor (ids). */
    static final Queue<Integer> ACCEPTED = new ConcurrentLinkedQueue<>();

    /** One session: the Java end, the Go process and the Go peer's name for it. */
    record Link(MuxSession java, GoPeer go, String goConn) {
    }

    private Link link;

    /** Connects a new session with {@code window} on both ends. */
    abstract Link connect(int window) throws Exception;

    abstract String topology();

    /**
     * For Java-server topologies: starts a Go client against {@code url} and takes the session the
     * Java server started for it from {@code sessions}.
     */
    static Link dialFromGo(String url, int window, java.util.concurrent.BlockingQueue<MuxSession> sessions) throws Exception {
        sessions.clear();
        GoPeer go = GoPeer.client(url, window);
        MuxSession s = sessions.poll(20, TimeUnit.SECONDS);
        if (s == null) {
            go.close();
            throw new AssertionError("the Go client connected but no Java session started; Go stderr:\n" + go.stderr());
        }
        return new Link(s, go, "c");
    }

    /** Called after each test with the link it used (close per-test resources). */
    void disconnect(Link l) throws Exception {
    }

    static MuxConfig config(int window) {
        return MuxConfig.builder().initialStreamWindow(window).build();
    }

    /** Java side of every session: echo every stream the Go side opens (FIN after its FIN). */
    static MuxStreamAcceptor echoAcceptor() {
        return (session, ch) -> {
            ACCEPTED.add(((MuxStreamChannel) ch).streamId());
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            ch.pipeline().addLast(new StreamEcho());
        };
    }

    @BeforeEach
    void clearAccepted() {
        ACCEPTED.clear();
    }

    @AfterEach
    void closeLink() throws Exception {
        if (link != null) {
            link.java().close();
            disconnect(link);
        }
    }

    private Link open(int window) throws Exception {
        link = connect(window);
        return link;
    }

    private void summary(String scenario, int window, String details) {
        System.out.printf("interop %-22s %-16s window=%-5s %s%n", topology(), scenario,
                window >= 1024 * 1024 ? window / (1024 * 1024) + "M" : window / 1024 + "K", details);
    }

    private static boolean goIsClient(Link l) {
        return l.java().role() == MuxRole.SERVER;
    }

    private static MuxStreamChannel openStream(MuxSession s) throws Exception {
        MuxStreamChannel ch = (MuxStreamChannel) s.openStream().get(T.toSeconds(), TimeUnit.SECONDS);
        ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        return ch;
    }

    /** A Java-opened stream sending {@code size} bytes to the Go echo and hashing the echo. */
    record Trip(MuxStreamChannel ch, Sink sink, Source source, long size) {
        static Trip start(MuxStreamChannel ch, long size, long seed) {
            Sink sink = new Sink(false);
            Source source = new Source(size, seed, sink);
            ch.pipeline().addLast(sink, source);
            source.start(ch);
            return new Trip(ch, sink, source, size);
        }

        /** Waits for our FIN and the peer's FIN; checks count and SHA-256; returns bytes received before our FIN. */
        long verify() throws Exception {
            long beforeFin = source.finQueued.get(T.toSeconds(), TimeUnit.SECONDS);
            long atPeerFin = sink.inputShutdown.get(T.toSeconds(), TimeUnit.SECONDS);
            assertThat(atPeerFin).as("bytes echoed on stream %d", ch.streamId()).isEqualTo(size);
            assertThat(sink.sha256Hex()).as("SHA-256 of the echo on stream %d", ch.streamId()).isEqualTo(source.sha256Hex());
            ch.close();
            return beforeFin;
        }
    }

    private void assertAlive(Link l) throws Exception {
        assertThat(l.java().isOpen()).as("Java session still open").isTrue();
        assertThat(l.java().isRemoteGoAway()).isFalse();
        l.go().expectOk(l.goConn(), "ping 1", T);
        // yamux logs "[ERR] ..." on keepalive timeouts, protocol errors, failed writes
        assertThat(l.go().stderr().lines().filter(line -> line.contains("[ERR]")))
                .as("errors logged by Go yamux").isEmpty();
    }

    private static long ms(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void echoBothWays(int window) throws Exception {
        Link l = open(window);
        MuxStreamChannel ch = openStream(l.java());
        assertThat(ch.streamId() % 2).as("Java-opened id parity").isEqualTo(goIsClient(l) ? 0 : 1);
        Sink got = new Sink(true);
        ch.pipeline().addLast(got);
        String hello = "hello from java over " + topology();
        ch.writeAndFlush(Unpooled.copiedBuffer(hello, StandardCharsets.UTF_8));
        await().atMost(T).until(() -> got.text().equals(hello));
        ch.shutdownOutput();
        assertThat(got.inputShutdown.get(T.toSeconds(), TimeUnit.SECONDS)).isEqualTo(hello.length());
        ch.close();

        String goResult = l.go().expectOk(l.goConn(), "open 1 13", T);
        assertThat(ACCEPTED).hasSize(1);
        assertThat(ACCEPTED.peek() % 2).as("Go-opened id parity").isEqualTo(goIsClient(l) ? 1 : 0);
        assertAlive(l);
        summary("echo", window, "java->go ok (stream " + ch.streamId() + "); go->java ok (stream "
                + ACCEPTED.peek() + ", " + goResult + ")");
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void thousandConcurrentStreamsBothWays(int window) throws Exception {
        Link l = open(window);
        int n = 1000;
        long start = System.nanoTime();
        // all 1000 are open at once; at most 128 opens await their ACK (our maxPendingOpens is 256)
        Semaphore pendingAcks = new Semaphore(128);
        List<CompletableFuture<io.netty.channel.Channel>> opens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            pendingAcks.acquire();
            CompletableFuture<Channel> f = l.java().openStream();
            f.whenComplete((c, e) -> pendingAcks.release());
            opens.add(f);
        }
        List<Trip> trips = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            MuxStreamChannel ch = (MuxStreamChannel) opens.get(i).get(T.toSeconds(), TimeUnit.SECONDS);
            ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            trips.add(new Trip(ch, null, null, 0));
        }
        assertThat(l.java().streamCount()).as("streams open at once").isGreaterThanOrEqualTo(n);
        for (int i = 0; i < n; i++) {
            trips.set(i, Trip.start(trips.get(i).ch(), 1024, i));
        }
        for (Trip t : trips) {
            t.verify();
        }
        long javaMs = ms(start);

        String goResult = l.go().expectOk(l.goConn(), "open " + n + " 1024", T);
        assertThat(ACCEPTED).hasSize(n).doesNotHaveDuplicates();
        assertAlive(l);
        summary("1000 streams", window, "java->go ok " + javaMs + " ms; go->java ok " + goResult);
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void transfer64MiBWithSha256BothWays(int window) throws Exception {
        Link l = open(window);
        long size = 64L * 1024 * 1024;
        long start = System.nanoTime();
        Trip t = Trip.start(openStream(l.java()), size, 64);
        t.verify();
        long javaMs = ms(start);
        String goResult = l.go().expectOk(l.goConn(), "open 1 " + size, Duration.ofSeconds(60));
        assertAlive(l);
        summary("64MiB sha256", window, String.format("java->go->java ok %d ms (%.0f MiB/s each way); go->java->go ok %s",
                javaMs, 64_000.0 / Math.max(1, javaMs), goResult));
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void halfCloseBothWays(int window) throws Exception {
        Link l = open(window);
        long size = 2L * window + 12345; // more than the window: flow control must go on after the FIN
        // Java FINs as soon as it has written; Go keeps echoing after reading our FIN, then FINs
        Trip t = Trip.start(openStream(l.java()), size, 7);
        long beforeFin = t.verify();
        assertThat(beforeFin).as("echo bytes received before our FIN").isLessThan(size);
        // Go FINs first; the Java echo writes on after reading Go's FIN, then FINs
        String goResult = l.go().expectOk(l.goConn(), "halfclose 1 " + size, T);
        assertThat(ACCEPTED).hasSize(1);
        assertAlive(l);
        summary("half-close", window, "java FIN first, " + (size - beforeFin) + " of " + size
                + " echo bytes read after it: ok; go FIN first: ok " + goResult);
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void pingBothWays(int window) throws Exception {
        Link l = open(window);
        List<String> rtts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Duration rtt = l.java().ping().get(T.toSeconds(), TimeUnit.SECONDS);
            assertThat(rtt).isPositive();
            rtts.add(rtt.toNanos() / 1000 + "us");
        }
        String goResult = l.go().expectOk(l.goConn(), "ping 3", T);
        assertAlive(l);
        summary("ping", window, "java->go ok rtt=" + String.join(",", rtts) + "; go->java ok " + goResult);
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void goAwayStopsNewStreamsButExistingOnesContinue(int window) throws Exception {
        Link l = open(window);
        MuxStreamChannel existing = openStream(l.java());
        Sink got = new Sink(true);
        existing.pipeline().addLast(got);
        existing.writeAndFlush(Unpooled.copiedBuffer("before", StandardCharsets.US_ASCII));
        await().atMost(T).until(() -> got.text().equals("before"));
        l.go().expectOk(l.goConn(), "hold", T); // a Go-opened stream, echoed by Java

        l.go().expectOk(l.goConn(), "goaway", T); // Go sends GoAway(0)
        await().atMost(T).until(() -> l.java().isRemoteGoAway());
        assertThatThrownBy(() -> l.java().openStream().get(T.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(ConnectException.class);
        // both existing streams go on in both directions, and close normally
        existing.writeAndFlush(Unpooled.copiedBuffer("after", StandardCharsets.US_ASCII));
        await().atMost(T).until(() -> got.text().equals("beforeafter"));
        existing.shutdownOutput();
        got.inputShutdown.get(T.toSeconds(), TimeUnit.SECONDS);
        l.go().expectOk(l.goConn(), "release", T);
        assertThat(l.java().isOpen()).isTrue();
        // Go may still open streams itself after its own GoAway (as in Go); Java accepts them
        l.go().expectOk(l.goConn(), "open 1 100", T);

        // Java's close sends GoAway(0) and closes the WebSocket: Go sees the session end
        l.java().close();
        l.java().closeFuture().get(T.toSeconds(), TimeUnit.SECONDS);
        l.go().expectOk(l.goConn(), "waitclose", T);
        String refused = l.go().expectOk(l.goConn(), "openfails", T);
        summary("goaway", window, "go GoAway(0): java openStream refused, 2 existing streams continued; java close: go " + refused);
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {SMALL, LARGE})
    void javaGoAwayMakesGoOpensFailButExistingStreamsContinue(int window) throws Exception {
        Link l = open(window);
        MuxStreamChannel existing = openStream(l.java()); // Java-opened, echoed by Go
        Sink got = new Sink(true);
        existing.pipeline().addLast(got);
        existing.writeAndFlush(Unpooled.copiedBuffer("before", StandardCharsets.US_ASCII));
        await().atMost(T).until(() -> got.text().equals("before"));
        l.go().expectOk(l.goConn(), "hold", T); // Go-opened, echoed by Java

        l.java().goAway(); // Java sends GoAway(0), the session stays open
        assertThat(l.java().isLocalGoAway()).isTrue();
        // barrier: our ping ACK leaves the control lane after the GoAway, and Go reads frames in
        // order, so once Go's ping returns it has seen the GoAway
        l.go().expectOk(l.goConn(), "ping 1", T);
        String refused = l.go().expectOk(l.goConn(), "openfails", T);
        assertThat(refused).as("Go's Open after our GoAway").contains("err=remote_end_is_not_accepting_connections");
        assertThat(ACCEPTED).as("only the held stream reached the Java acceptor").hasSize(1);

        // both existing streams go on in both directions, and close normally
        existing.writeAndFlush(Unpooled.copiedBuffer("after", StandardCharsets.US_ASCII));
        await().atMost(T).until(() -> got.text().equals("beforeafter"));
        existing.shutdownOutput();
        got.inputShutdown.get(T.toSeconds(), TimeUnit.SECONDS);
        existing.close();
        l.go().expectOk(l.goConn(), "release", T);
        // GoAway only concerns the peer's opens: Java may still open streams (as in Go)
        Trip t = Trip.start(openStream(l.java()), 4096, 3);
        t.verify();
        assertAlive(l);

        // a second goAway() is a no-op; close() still ends the session for Go
        l.java().goAway();
        l.java().close();
        l.java().closeFuture().get(T.toSeconds(), TimeUnit.SECONDS);
        l.go().expectOk(l.goConn(), "waitclose", T);
        summary("java goaway", window, "java GoAway(0): go open " + refused
                + ", 2 existing streams continued, java open still ok; java close: go saw the end");
    }
}
