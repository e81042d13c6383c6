package io.agentbox.mux.fuzz;

import static io.agentbox.mux.frame.YamuxFrames.FLAG_ACK;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_FIN;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_RST;
import static io.agentbox.mux.frame.YamuxFrames.FLAG_SYN;
import static io.agentbox.mux.frame.YamuxFrames.GO_AWAY_PROTOCOL_ERROR;
import static io.agentbox.mux.frame.YamuxFrames.INITIAL_STREAM_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.MAX_WINDOW;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_DATA;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_GO_AWAY;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_PING;
import static io.agentbox.mux.frame.YamuxFrames.TYPE_WINDOW_UPDATE;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxChildAcceptor;
import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Seeded fuzzer for {@link MuxSession#receive(ByteBuffer)} (issue "mux/: production-grade yamux —
 * hostile input"). Each case builds a session (random role, acceptor, limits, stalled or live
 * transport), feeds it a generated frame sequence — benign traffic, optionally ending in one
 * "poison" frame whose outcome the spec fixes — possibly mutated, split into random pieces or
 * byte by byte, and checks after every piece and at the end:
 * <ul>
 *   <li>nothing escapes {@code receive()}, and every case finishes within a time bound;</li>
 *   <li>{@link MuxSession#bufferedInboundBytes()} never exceeds {@code maxSessionReceiveBuffer};</li>
 *   <li>what the session writes is valid yamux; it never sends GoAway(2) (internal error = a bug);</li>
 *   <li>benign input leaves the session open with no GoAway; a poison frame ends it with
 *       GoAway(1) and a closed transport; a peer GoAway(!=0) ends it without one;</li>
 *   <li>after close, all streams are gone and the buffered-bytes count is back to 0;</li>
 *   <li>Netty's paranoid leak detector reports nothing.</li>
 * </ul>
 * Seeds: base {@code mux.fuzz.seed} (default below) + case index; {@code mux.fuzz.cases} cases.
 */
class MuxFuzzTest {

    private static final long BASE_SEED = Long.getLong("mux.fuzz.seed", 0x5EED_CAFEL);
    private static final int CASES = Integer.getInteger("mux.fuzz.cases", 600);
    private static final int WINDOW = INITIAL_STREAM_WINDOW;
    private static final EventLoopGroup CHILD_LOOPS = new DefaultEventLoopGroup(2);
    private static final ExecutorService RUNNER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "mux-fuzz");
        t.setDaemon(true);
        return t;
    });

    enum Acceptor { READ, HOLD, REFUSE, CHILD_HOLD }

    enum Expect { OPEN, PROTOCOL_ERROR, PEER_GOAWAY, ANY }

    private final Map<Expect, Integer> outcomes = new EnumMap<>(Expect.class);
    private long frames;
    private long bytesFed;
    private long pieces;
    private long capResets;

    @AfterAll
    static void shutdown() {
        CHILD_LOOPS.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        RUNNER.shutdownNow();
    }

    @Test
    void hostileInputNeverBreaksTheSessionInvariants() throws Exception {
        assertThat(ResourceLeakDetector.getLevel()).as("surefire runs with paranoid leak detection")
                .isEqualTo(ResourceLeakDetector.Level.PARANOID);
        long start = System.nanoTime();
        try (LeakWatch leaks = new LeakWatch()) {
            for (int i = 0; i < CASES; i++) {
                long seed = BASE_SEED + i;
                Future<?> run = RUNNER.submit(() -> {
                    runCase(seed);
                    return null;
                });
                try {
                    run.get(15, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    run.cancel(true);
                    throw new AssertionError("fuzz case hung; reproduce with -Dmux.fuzz.seed=" + seed + " -Dmux.fuzz.cases=1");
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new AssertionError("fuzz case failed; reproduce with -Dmux.fuzz.seed=" + seed
                            + " -Dmux.fuzz.cases=1: " + e.getCause().getMessage(), e.getCause());
                }
            }
            List<String> reports = leaks.collect();
            assertThat(reports).as("Netty leak reports").isEmpty();
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("mux fuzz: base seed 0x%X, %d cases (%s), %d frames, %d bytes in %d pieces, %d RSTs sent, %d ms%n",
                BASE_SEED, CASES, outcomes, frames, bytesFed, pieces, capResets, ms);
        if (CASES >= 100) { // the generator's mix really exercises both outcomes
            assertThat(outcomes.getOrDefault(Expect.PROTOCOL_ERROR, 0)).isGreaterThan(CASES / 10);
            assertThat(outcomes.getOrDefault(Expect.OPEN, 0)).isGreaterThan(CASES / 10);
        }
    }

    // ---- one case ------------------------------------------------------------------------------

    private void runCase(long seed) throws Exception {
        // java.util.Random's first outputs are correlated for adjacent seeds: scramble first
        Random r = new Random(seed * 0x9E3779B97F4A7C15L ^ 0xD1B54A32D192ED03L);
        MuxRole role = r.nextBoolean() ? MuxRole.SERVER : MuxRole.CLIENT;
        Acceptor mode = Acceptor.values()[r.nextInt(Acceptor.values().length)];
        boolean stall = r.nextInt(4) == 0;
        long cap = new long[] {WINDOW, 2L * WINDOW, 4L * WINDOW, 64L << 20}[r.nextInt(4)];
        int backlog = mode == Acceptor.CHILD_HOLD ? 1 + r.nextInt(16) : 1024;
        int pingReplies = new int[] {4, 16, 256}[r.nextInt(3)];
        MuxConfig config = MuxConfig.builder().keepAliveInterval(Duration.ZERO).acceptBacklog(backlog)
                .maxSessionReceiveBuffer(cap).maxPendingPingReplies(pingReplies).build();

        List<Channel> children = new ArrayList<>();
        MuxStreamAcceptor acceptor = switch (mode) {
            case READ -> (s, ch) -> ch.pipeline().addLast(new Drain());
            case HOLD -> (s, ch) -> ch.config().setAutoRead(false);
            case REFUSE -> null;
            case CHILD_HOLD -> (MuxChildAcceptor) (s, ch) -> {
                synchronized (children) {
                    children.add(ch);
                }
            };
        };
        FuzzPeer peer = new FuzzPeer(stall);
        MuxSession session = MuxSession.start(role, config, peer, acceptor);

        Gen gen = new Gen(r, role, mode, stall, backlog, pingReplies);
        gen.build();
        byte[] input = gen.out.toByteArray();
        Expect expect = gen.expect;
        if (gen.timingDependent && expect != Expect.PROTOCOL_ERROR) {
            expect = Expect.ANY;
        }
        if (r.nextInt(5) == 0) {
            input = mutate(r, input);
            expect = Expect.ANY;
        }
        frames += gen.frames;
        bytesFed += input.length;

        // feed: whole, byte by byte, tiny pieces or larger pieces
        // tiny pieces are costly under paranoid leak detection (a stack trace per buffer write)
        int split = r.nextInt(4);
        if (split == 1 && input.length > 8_192) {
            split = 2;
        }
        if (split == 2 && input.length > 32_768) {
            split = 3;
        }
        String label = String.format("role=%s acceptor=%s stall=%s cap=%d backlog=%d pingCap=%d pings=%d poison=%s expect=%s split=%d bytes=%d",
                role, mode, stall, cap, backlog, pingReplies, gen.pings, gen.poison, expect, split, input.length);
        long t0 = System.nanoTime();
        try {
            feedAndCheck(session, peer, input, split, r, cap, expect, gen, children);
            if (Boolean.getBoolean("mux.fuzz.slow") && System.nanoTime() - t0 > 50_000_000) {
                System.out.println("slow " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + label);
            }
        } catch (AssertionError | Exception e) {
            List<io.agentbox.mux.frame.FrameHeader> sent = peer.sent();
            throw new AssertionError(e.getMessage() + "\n  case: " + label + "\n  last frames sent: "
                    + sent.subList(Math.max(0, sent.size() - 8), sent.size()), e);
        }
    }

    private void feedAndCheck(MuxSession session, FuzzPeer peer, byte[] input, int split, Random r, long cap,
            Expect expect, Gen gen, List<Channel> children) throws Exception {
        int pos = 0;
        while (pos < input.length) {
            int n = switch (split) {
                case 0 -> input.length;
                case 1 -> 1;
                case 2 -> 1 + r.nextInt(13);
                default -> 1 + r.nextInt(4096);
            };
            n = Math.min(n, input.length - pos);
            ByteBuffer piece = ByteBuffer.wrap(input, pos, n);
            session.receive(piece); // must not throw
            assertThat(piece.hasRemaining()).as("receive consumes all input").isFalse();
            assertThat(session.bufferedInboundBytes()).as("session receive buffer").isBetween(0L, cap);
            pos += n;
            pieces++;
        }
        peer.unstall();

        switch (expect) {
            case OPEN -> {
                assertThat(session.isOpen()).as("benign input keeps the session open").isTrue();
                assertThat(peer.goAways()).as("no GoAway for benign input").isEmpty();
            }
            case PROTOCOL_ERROR -> {
                session.closeFuture().get(5, TimeUnit.SECONDS);
                // another thread (a stream's event loop) may be the one writing the GoAway
                awaitTrue(() -> !peer.goAways().isEmpty(), "GoAway written");
                assertThat(peer.goAways()).as("poison %s is answered with GoAway(1)", gen.poison)
                        .containsExactly((long) GO_AWAY_PROTOCOL_ERROR);
                awaitTrue(peer::closed, "transport closed after GoAway(1)");
            }
            case PEER_GOAWAY -> {
                session.closeFuture().get(5, TimeUnit.SECONDS);
                assertThat(peer.goAways()).as("we answer a peer's GoAway(error) with nothing").isEmpty();
                awaitTrue(peer::closed, "transport closed after peer GoAway");
            }
            case ANY -> assertThat(peer.goAways()).as("only GoAway(1) on hostile input, never internal error")
                    .allMatch(c -> c == GO_AWAY_PROTOCOL_ERROR);
        }
        outcomes.merge(expect, 1, Integer::sum);
        capResets += peer.sent().stream().filter(h -> h.hasFlag(FLAG_RST)).count();
        assertThat(peer.malformed()).as("session output is valid yamux").isNull();

        // a slow child acceptor registers its channels late: the mailbox replays (or drops) what arrived
        List<Channel> late;
        synchronized (children) {
            late = new ArrayList<>(children);
        }
        for (Channel ch : late) {
            CHILD_LOOPS.next().register(ch).addListener(f -> {
                if (f.isSuccess()) {
                    ch.close();
                }
            });
        }

        session.close();
        session.closeFuture().get(5, TimeUnit.SECONDS);
        assertThat(peer.goAways()).as("never internal error").doesNotContain(2L);
        awaitTrue(() -> session.streamCount() == 0 && session.bufferedInboundBytes() == 0,
                "streams and buffered bytes released after close (buffered=" + session.bufferedInboundBytes() + ")");
    }

    private static void awaitTrue(java.util.function.BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(1);
        }
    }

    /** Consumes and releases everything (auto-read). */
    private static final class Drain extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ((ByteBuf) msg).release();
        }
    }

    // ---- mutation ------------------------------------------------------------------------------

    private static byte[] mutate(Random r, byte[] in) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] b = in.clone();
        int k = 1 + r.nextInt(8);
        for (int i = 0; i < k && b.length > 0; i++) {
            int at = r.nextInt(b.length);
            switch (r.nextInt(6)) {
                case 0 -> b[at] ^= (byte) (1 << r.nextInt(8));
                case 1 -> b[at] = (byte) new int[] {0, 1, 0x7F, 0x80, 0xFF}[r.nextInt(5)];
                case 2 -> { // delete a range
                    int n = Math.min(b.length - at, 1 + r.nextInt(24));
                    byte[] c = new byte[b.length - n];
                    System.arraycopy(b, 0, c, 0, at);
                    System.arraycopy(b, at + n, c, at, b.length - at - n);
                    b = c;
                }
                case 3 -> { // insert random bytes
                    byte[] ins = new byte[1 + r.nextInt(24)];
                    r.nextBytes(ins);
                    out.reset();
                    out.write(b, 0, at);
                    out.writeBytes(ins);
                    out.write(b, at, b.length - at);
                    b = out.toByteArray();
                }
                case 4 -> { // duplicate a range (replays frames: duplicate SYNs, double data)
                    int n = Math.min(b.length - at, 12 + r.nextInt(64));
                    out.reset();
                    out.write(b, 0, at + n);
                    out.write(b, at, b.length - at);
                    b = out.toByteArray();
                }
                default -> b = java.util.Arrays.copyOf(b, at); // truncate
            }
        }
        return b;
    }

    // ---- generator -----------------------------------------------------------------------------

    /** Builds one case's wire bytes and the outcome the spec prescribes for them. */
    static final class Gen {
        final Random r;
        final MuxRole role;
        final Acceptor mode;
        final boolean stall;
        final int backlog;
        final int pingReplyCap;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final List<Stream> streams = new ArrayList<>();
        int nextPeerId;
        int opened;
        int pings;
        int frames;
        Expect expect = Expect.OPEN;
        String poison = "none";
        boolean timingDependent;

        static final class Stream {
            final int id;
            final long sendWindow; // what the session believes it may send us
            final boolean live;    // deterministically in the session's map (accepted, not refused)
            long dataSent;
            boolean clean = true;  // no data, FIN or RST yet: cannot have been reset by the session

            Stream(int id, long sendWindow, boolean live) {
                this.id = id;
                this.sendWindow = sendWindow;
                this.live = live;
            }
        }

        Gen(Random r, MuxRole role, Acceptor mode, boolean stall, int backlog, int pingReplyCap) {
            this.r = r;
            this.role = role;
            this.mode = mode;
            this.stall = stall;
            this.backlog = backlog;
            this.pingReplyCap = pingReplyCap;
            this.nextPeerId = role == MuxRole.SERVER ? 1 : 2; // the peer holds the other role
        }

        void build() {
            int ops = r.nextInt(60);
            for (int i = 0; i < ops; i++) {
                benign();
            }
            if (r.nextInt(3) != 0) {
                poison();
                // whatever follows a fatal frame must be ignored
                int junk = r.nextInt(4);
                for (int i = 0; i < junk; i++) {
                    byte[] b = new byte[1 + r.nextInt(40)];
                    r.nextBytes(b);
                    out.writeBytes(b);
                }
            } else if (r.nextInt(4) == 0) {
                // a truncated trailing header or payload: the decoder just waits
                frame(TYPE_DATA, 0, unknownId(), 100);
                out.writeBytes(new byte[r.nextInt(100)]);
                if (r.nextBoolean()) {
                    out.writeBytes(new byte[] {0, 1, 0});
                }
            }
        }

        // -- benign: legal (or legally ignored) traffic that must keep the session open --

        void benign() {
            switch (r.nextInt(12)) {
                case 0, 1 -> open();
                case 2, 3, 4 -> data();
                case 5 -> windowUpdate();
                case 6 -> unknownStream();
                case 7 -> ping();
                case 8 -> randomFlags();
                case 9 -> synFlood();
                case 10 -> {
                    if (r.nextInt(3) == 0) {
                        pingStorm();
                    } else {
                        ping();
                    }
                }
                default -> {
                    if (r.nextBoolean()) {
                        frame(TYPE_GO_AWAY, 0, 0, 0); // GoAway(0): no new streams from us, nothing else
                    } else {
                        frame(TYPE_WINDOW_UPDATE, 0, 0, r.nextInt()); // session-id window update: ignored
                    }
                }
            }
        }

        void open() {
            if (opened >= 400) {
                return;
            }
            int id = nextPeerId;
            nextPeerId += 2;
            boolean live = mode == Acceptor.READ || mode == Acceptor.HOLD
                    || (mode == Acceptor.CHILD_HOLD && opened < backlog);
            opened++;
            if (r.nextInt(4) == 0) {
                int n = r.nextInt(64);
                Stream s = new Stream(id, WINDOW, live);
                s.dataSent = n;
                s.clean = n == 0;
                streams.add(s);
                frame(TYPE_DATA, FLAG_SYN, id, n);
                payload(n);
            } else {
                int surplus = r.nextInt(4) == 0 ? r.nextInt(4 << 20) : 0;
                streams.add(new Stream(id, WINDOW + (long) surplus, live));
                frame(TYPE_WINDOW_UPDATE, FLAG_SYN, id, surplus);
            }
        }

        void data() {
            if (streams.isEmpty()) {
                open();
                return;
            }
            Stream s = streams.get(r.nextInt(streams.size()));
            long budget = WINDOW - s.dataSent;
            if (budget <= 0) {
                return;
            }
            int n = (int) Math.min(budget, r.nextInt(8) == 0 ? WINDOW : 1 + r.nextInt(16 * 1024));
            s.dataSent += n;
            s.clean = false;
            int flags = r.nextInt(6) == 0 ? FLAG_FIN : 0;
            frame(TYPE_DATA, flags, s.id, n);
            payload(n);
        }

        void windowUpdate() {
            if (streams.isEmpty()) {
                return;
            }
            Stream s = streams.get(r.nextInt(streams.size()));
            int flags = new int[] {0, 0, FLAG_ACK, FLAG_FIN, FLAG_RST, FLAG_FIN | FLAG_RST}[r.nextInt(6)];
            if (flags != 0 && flags != FLAG_ACK) {
                s.clean = false;
            }
            frame(TYPE_WINDOW_UPDATE, flags, s.id, r.nextInt(64 * 1024));
        }

        void unknownStream() {
            int id = unknownId();
            if (r.nextBoolean()) {
                int n = r.nextInt(4096);
                frame(TYPE_DATA, r.nextInt(16) & ~FLAG_SYN, id, n);
                payload(n);
            } else {
                frame(TYPE_WINDOW_UPDATE, r.nextInt(16) & ~FLAG_SYN, id, r.nextInt());
            }
        }

        /** A stream id the session has never seen: ours (we open none) or far in the peer's space. */
        int unknownId() {
            boolean ours = r.nextBoolean();
            int base = 1_000_000 + 2 * r.nextInt(1_000_000);
            int peerParity = role == MuxRole.SERVER ? 1 : 0;
            return ours ? base + (1 - peerParity) : base + peerParity;
        }

        void ping() {
            if (r.nextBoolean() && canPing(1)) {
                pings++;
                frame(TYPE_PING, FLAG_SYN, 0, r.nextInt());
            } else {
                frame(TYPE_PING, r.nextBoolean() ? FLAG_ACK : 0, r.nextInt(3), r.nextInt()); // stray ACKs are ignored
            }
        }

        boolean canPing(int n) {
            return pings + n < pingReplyCap;
        }

        /**
         * Up to the reply cap a storm is benign. Beyond it (live transport only) the outcome depends
         * on timing — whether a write by a stream's event loop keeps replies queued — so the case
         * only checks the invariants, not open-or-closed.
         */
        void pingStorm() {
            int n = 1 + r.nextInt(stall ? pingReplyCap : 400);
            if (!canPing(n)) {
                if (stall) {
                    return;
                }
                timingDependent = true;
            }
            pings += n;
            for (int i = 0; i < n; i++) {
                frame(TYPE_PING, FLAG_SYN, 0, i);
            }
        }

        void synFlood() {
            int n = 1 + r.nextInt(mode == Acceptor.CHILD_HOLD ? 3 * backlog : 100);
            for (int i = 0; i < n; i++) {
                open();
            }
        }

        /** Every flag combination except SYN (which opens streams) on existing or unknown streams. */
        void randomFlags() {
            int flags = r.nextInt(0x10000) & ~FLAG_SYN;
            boolean existing = !streams.isEmpty() && r.nextBoolean();
            int id = existing ? streams.get(r.nextInt(streams.size())).id : unknownId();
            if (existing && (flags & (FLAG_FIN | FLAG_RST)) != 0) {
                streams.stream().filter(s -> s.id == id).forEach(s -> s.clean = false);
            }
            frame(r.nextBoolean() ? TYPE_WINDOW_UPDATE : TYPE_DATA, flags, id, 0);
        }

        // -- poison: one frame with a fixed fatal outcome --

        void poison() {
            Stream target = cleanLive();
            int kind = r.nextInt(9);
            if (target == null && kind >= 2 && kind <= 4) {
                kind = 5;
            }
            switch (kind) {
                case 0 -> {
                    poison = "bad version";
                    header(1 + r.nextInt(255), r.nextInt(4), r.nextInt(16), r.nextInt(), r.nextInt());
                }
                case 1 -> {
                    poison = "bad type";
                    header(0, 4 + r.nextInt(252), r.nextInt(16), r.nextInt(), r.nextInt());
                }
                case 2 -> {
                    poison = "data past the window";
                    long len = r.nextBoolean() ? WINDOW + 1 : WINDOW + 1 + (long) r.nextInt(Integer.MAX_VALUE);
                    frame(TYPE_DATA, 0, target.id, (int) Math.min(len, MAX_WINDOW));
                }
                case 3 -> {
                    poison = "duplicate SYN";
                    frame(r.nextBoolean() ? TYPE_WINDOW_UPDATE : TYPE_DATA, FLAG_SYN, target.id, 0);
                }
                case 4 -> {
                    poison = "window overflow";
                    long room = MAX_WINDOW - target.sendWindow;
                    long delta = Math.min(MAX_WINDOW, room + 1 + r.nextInt(1000));
                    frame(TYPE_WINDOW_UPDATE, r.nextBoolean() ? 0 : FLAG_ACK, target.id, (int) delta);
                }
                case 5 -> {
                    poison = "SYN window overflow";
                    long delta = MAX_WINDOW - WINDOW + 1 + r.nextInt(WINDOW - 1);
                    frame(TYPE_WINDOW_UPDATE, FLAG_SYN, nextPeerId, (int) delta);
                }
                case 6 -> {
                    poison = "SYN from our id space";
                    int ours = r.nextInt(8) == 0 ? 0 : (role == MuxRole.SERVER ? 2 : 1) + 2 * r.nextInt(1000);
                    frame(r.nextBoolean() ? TYPE_WINDOW_UPDATE : TYPE_DATA, FLAG_SYN, ours, 0);
                }
                case 7 -> {
                    if (!stall) {
                        poison = "peer GoAway(error)";
                        frame(TYPE_GO_AWAY, 0, 0, 1 + r.nextInt(r.nextBoolean() ? 3 : Integer.MAX_VALUE));
                        expect = Expect.PEER_GOAWAY;
                        return;
                    }
                    poison = "ping flood";
                    for (int i = 0; i <= pingReplyCap; i++) {
                        frame(TYPE_PING, FLAG_SYN, 0, i);
                    }
                }
                default -> {
                    poison = "huge data past the window";
                    if (target == null) {
                        header(0, 9, 0, 0, 0);
                        poison = "bad type";
                    } else {
                        frame(TYPE_DATA, r.nextInt(16) & ~FLAG_SYN, target.id, -1);
                    }
                }
            }
            expect = Expect.PROTOCOL_ERROR;
        }

        Stream cleanLive() {
            List<Stream> c = streams.stream().filter(s -> s.live && s.clean).toList();
            return c.isEmpty() ? null : c.get(r.nextInt(c.size()));
        }

        // -- wire --

        void frame(int type, int flags, int id, int length) {
            header(0, type, flags, id, length);
        }

        void header(int version, int type, int flags, int id, int length) {
            frames++;
            out.write(version);
            out.write(type);
            out.write(flags >>> 8);
            out.write(flags);
            out.writeBytes(ByteBuffer.allocate(8).putInt(id).putInt(length).array());
        }

        void payload(int n) {
            byte[] b = new byte[n];
            r.nextBytes(b);
            out.writeBytes(b);
        }
    }
}
