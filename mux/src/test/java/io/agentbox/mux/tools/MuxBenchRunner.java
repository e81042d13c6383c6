package io.agentbox.mux.tools;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.interop.GoPeer;
import io.netty.channel.Channel;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One-shot loopback benchmark of the mux (no JUnit): run with {@code deploy/bin/bench-mux}. Starts
 * {@link MuxEchoServer} in a child JVM (so the heap figures are the client end alone) and prints a
 * markdown table, once per WebSocket library (Netty, then Jetty; {@code --library} picks one):
 * mux throughput with 1 and 64 streams, the raw WebSocket echo of the same library with the same
 * bytes, open+1-byte-echo p50/p99; and heap per idle stream (first library only).
 *
 * <p>First, unless Go is unavailable or {@code --rounds 0}: a head-to-head table, Java against Go
 * in {@code --rounds} (default 5) interleaved rounds after a JIT warm-up, medians (see {@link #headToHead}).
 *
 * <p>Options: {@code --bytes 256m} (total per throughput run), {@code --rtt-samples 1000},
 * {@code --warmup 200}, {@code --idle-streams 10000}, {@code --window 256k}, {@code --in-process}
 * (echo server in this JVM), {@code --go-url ws://host:port/mux} (bench this Go hashicorp/yamux
 * echo peer instead of starting one), {@code --go-raw-url ws://host:port/echo} (the Go peer's
 * plain WebSocket echo, if it has one), {@code --no-go} (no Go rows).
 *
 * <p>Without {@code --go-url} the runner builds and starts the Go interop peer
 * ({@code mux/src/test/go/yamuxpeer}, hashicorp/yamux over gorilla WebSocket, see {@link GoPeer})
 * in server mode and measures it twice: with our {@link MuxBench} client (Java client, Go server)
 * with the peer's own {@code -mode bench} client (Go to Go), same bytes and samples, and the Go
 * client against our echo server.
 */
public final class MuxBenchRunner {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private long totalBytes = 256L << 20;
    private int rttSamples = 1000;
    private int warmup = 200;
    private int idleStreams = 10_000;
    private int window = 256 * 1024;
    private boolean inProcess;
    private boolean noGo;
    private URI goUrl;
    private URI goRawUrl;
    private List<WebSocketLibrary> libraries = List.of(WebSocketLibrary.NETTY, WebSocketLibrary.JETTY);
    private int rounds = 5;
    private final List<String[]> headToHead = new ArrayList<>();
    private final List<String[]> rows = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        MuxBenchRunner r = new MuxBenchRunner();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bytes" -> r.totalBytes = Sizes.parse(args[++i]);
                case "--rtt-samples" -> r.rttSamples = Integer.parseInt(args[++i]);
                case "--warmup" -> r.warmup = Integer.parseInt(args[++i]);
                case "--idle-streams" -> r.idleStreams = Integer.parseInt(args[++i]);
                case "--window" -> r.window = (int) Sizes.parse(args[++i]);
                case "--in-process" -> r.inProcess = true;
                case "--go-url" -> r.goUrl = URI.create(args[++i]);
                case "--go-raw-url" -> r.goRawUrl = URI.create(args[++i]);
                case "--no-go" -> r.noGo = true;
                case "--library" -> r.libraries = List.of(WebSocketLibrary.parse(args[++i]));
                case "--rounds" -> r.rounds = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + "; see the MuxBenchRunner javadoc");
                    System.exit(2);
                }
            }
        }
        r.run();
        System.exit(0);
    }

    private void run() throws Exception {
        MuxConfig config = MuxConfig.builder().initialStreamWindow(window).build();
        if (!noGo && goUrl == null && rounds > 0) {
            headToHead(config);
        }
        for (WebSocketLibrary library : libraries) {
            EchoPeer peer = inProcess ? EchoPeer.inProcess(config, library) : EchoPeer.childJvm(window, library);
            try {
                log("echo server (" + library.label() + "): " + peer.mux + (inProcess ? " (in process)" : " (child JVM)"));
                javaRuns(config, peer, library, library == libraries.get(0));
                if (!noGo && goUrl == null) {
                    goClientJavaServer(peer.mux, library);
                }
            } finally {
                peer.close();
            }
        }
        goRuns(config);
        printTable();
    }

    private void javaRuns(MuxConfig config, EchoPeer peer, WebSocketLibrary library, boolean measureHeap) throws Exception {
        long per64 = Math.max(1, totalBytes / 64);
        String lib = "(" + library.label() + ")";
        try (MuxBench bench = MuxBench.connect(peer.mux, config, TIMEOUT, library)) {
            log("warm-up " + lib);
            bench.throughput(8, Math.max(1, totalBytes / 32), null);
            bench.throughput(1, Math.max(1, totalBytes / 4), null);
            bench.latency(0, 200);
            RawWebSocketBench.run(peer.raw, Math.max(1, totalBytes / 4), 64 * 1024, TIMEOUT, library);

            log("mux 1 stream x " + Sizes.format(totalBytes));
            MuxBenchResult.Throughput t1 = bench.throughput(1, totalBytes, null);
            row("Java mux " + lib + " echo throughput, 1 stream x " + Sizes.format(totalBytes), mbs(t1));
            log("mux 64 streams x " + Sizes.format(per64));
            MuxBenchResult.Throughput t64 = bench.throughput(64, per64, null);
            row("Java mux " + lib + " echo throughput, 64 streams x " + Sizes.format(per64), mbs(t64));
            log("raw WebSocket x " + Sizes.format(totalBytes));
            MuxBenchResult.Throughput raw = RawWebSocketBench.run(peer.raw, totalBytes, 64 * 1024, TIMEOUT, library);
            row("Java WebSocket " + lib + " echo without mux, 1 socket x " + Sizes.format(totalBytes) + " (64 KiB messages)", mbs(raw));
            log("latency " + warmup + " + " + rttSamples);
            MuxBenchResult.Latency l = bench.latency(warmup, rttSamples);
            row("Java mux " + lib + " open + 1 B echo, p50 / p99 (" + rttSamples + " samples)", lat(l));
            row("Java mux " + lib + " open alone (SYN to ACK), p50", ms(l.openP50Nanos()));
            if (!measureHeap) {
                return;
            }

            log("heap with " + idleStreams + " idle streams");
            long before = usedHeapAfterGc();
            List<Channel> idle = bench.openStreams(idleStreams);
            long after = usedHeapAfterGc();
            int open = bench.session().streamCount();
            idle.forEach(Channel::close);
            String where = inProcess ? "both ends in one JVM" : "client end";
            row("Java heap per idle stream (" + open + " open, " + where + ")",
                    String.format(Locale.ROOT, "%.0f bytes", (after - before) / (double) idleStreams));
        }
    }

    /**
     * Java (first library) against Go in {@code rounds} interleaved rounds, so that load from
     * elsewhere on a shared machine hits both alike. Per round, for 1 stream and then 64: Java to
     * Java, Go to Go, Go client to our server (our server role), our client to the Go server (our
     * client role); then the raw Java WebSocket. Every Java figure is compared with Go to Go of the
     * same round set. Then Java and Go open+echo latency. Medians.
     */
    private void headToHead(MuxConfig config) throws Exception {
        GoPeer go;
        try {
            go = startGoServer();
        } catch (Exception | AssertionError e) {
            headToHead.add(new String[] {"Go peer", "not run: " + firstLine(e), "", ""});
            return;
        }
        WebSocketLibrary library = libraries.get(0);
        long per64 = Math.max(1, totalBytes / 64);
        try (GoPeer goServer = go) {
            String addr = goServer.awaitLine("LISTEN ", Duration.ofSeconds(30)).substring("LISTEN ".length()).trim();
            URI goUrl = URI.create("ws://" + addr + "/mux?window=" + window);
            EchoPeer peer = inProcess ? EchoPeer.inProcess(config, library) : EchoPeer.childJvm(window, library);
            try (MuxBench bench = MuxBench.connect(peer.mux, config, TIMEOUT, library);
                    MuxBench javaToGo = MuxBench.connect(goUrl, config, TIMEOUT, library)) {
                // both JVMs must be JIT-compiled before the first measured round (C2 takes seconds of
                // load); without this the first Java round runs at half speed and drags the median
                log("head to head: warm-up (JIT)");
                for (int i = 0; i < 3; i++) {
                    bench.throughput(1, totalBytes, null);
                    bench.throughput(64, per64, null);
                    RawWebSocketBench.run(peer.raw, totalBytes, 64 * 1024, TIMEOUT, library);
                }
                bench.latency(0, Math.max(1000, warmup));
                goMbps(goUrl, "-streams", "1", "-bytes", Long.toString(Math.max(1, totalBytes / 4)), "-warmup", "1");
                goMbps(peer.mux, "-streams", "1", "-bytes", Long.toString(Math.max(1, totalBytes / 4)), "-warmup", "1");
                javaToGo.throughput(1, Math.max(1, totalBytes / 4), null);
                double[][] v = new double[9][rounds];
                for (int r = 0; r < rounds; r++) {
                    log("head to head: round " + (r + 1) + " of " + rounds);
                    v[0][r] = bench.throughput(1, totalBytes, null).mbPerSecond();
                    v[1][r] = goMbps(goUrl, "-streams", "1", "-bytes", Long.toString(totalBytes), "-warmup", "1");
                    v[5][r] = goMbps(peer.mux, "-streams", "1", "-bytes", Long.toString(totalBytes), "-warmup", "1");
                    v[7][r] = javaToGo.throughput(1, totalBytes, null).mbPerSecond();
                    v[2][r] = bench.throughput(64, per64, null).mbPerSecond();
                    v[3][r] = goMbps(goUrl, "-streams", "64", "-bytes", Long.toString(per64), "-warmup", "1");
                    v[6][r] = goMbps(peer.mux, "-streams", "64", "-bytes", Long.toString(per64), "-warmup", "1");
                    v[8][r] = javaToGo.throughput(64, per64, null).mbPerSecond();
                    v[4][r] = RawWebSocketBench.run(peer.raw, totalBytes, 64 * 1024, TIMEOUT, library).mbPerSecond();
                }
                String lib = "Java mux (" + library.label() + ")";
                String one = "1 stream x " + Sizes.format(totalBytes);
                String many = "64 streams x " + Sizes.format(per64);
                compare("echo throughput, both ends ours, " + one, lib, v[0], v[1], v[4]);
                compare("echo throughput, both ends ours, " + many, lib, v[2], v[3], v[4]);
                compare("as server: Go client -> Java server, " + one, lib, v[5], v[1], null);
                compare("as server: Go client -> Java server, " + many, lib, v[6], v[3], null);
                compare("as client: Java client -> Go server, " + one, lib, v[7], v[1], null);
                compare("as client: Java client -> Go server, " + many, lib, v[8], v[3], null);
                MuxBenchResult.Latency l = bench.latency(warmup, rttSamples);
                String goRtt = goBench(goUrl, "-streams", "0", "-rtt", Integer.toString(rttSamples), "-warmup", Integer.toString(warmup));
                headToHead.add(new String[] {"open + 1 B echo p50 / p99 (" + rttSamples + " samples)", lat(l),
                        goRtt, ratio(l.p50Nanos() / 1e6, parseFirstMs(goRtt)) + " (p50, Java / Go)"});
            } finally {
                peer.close();
            }
        }
    }

    /** One head-to-head row: medians, every round, Java / Go; {@code raw} (nullable) adds the raw WebSocket ratio. */
    private void compare(String what, String lib, double[] java, double[] go, double[] raw) {
        double j = median(java);
        double g = median(go);
        String vsRaw = "";
        if (raw != null) {
            double w = median(raw);
            vsRaw = "; " + ratio(j, w) + " of raw WebSocket (" + String.format(Locale.ROOT, "%.1f", w) + " MB/s)";
        }
        headToHead.add(new String[] {what, String.format(Locale.ROOT, "%.1f MB/s %s", j, all(java)),
                String.format(Locale.ROOT, "%.1f MB/s %s", g, all(go)),
                ratio(j, g) + " of Go" + String.format(Locale.ROOT, " (%.2f x)", g > 0 ? j / g : Double.NaN) + vsRaw});
        log(lib + " " + what + ": " + j + " MB/s vs Go " + g + " MB/s");
    }

    private static String all(double[] values) {
        StringBuilder b = new StringBuilder("(");
        for (int i = 0; i < values.length; i++) {
            b.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", values[i]));
        }
        return b.append(")").toString();
    }

    private static double median(double[] values) {
        double[] s = values.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String ratio(double a, double b) {
        return b <= 0 || Double.isNaN(a) || Double.isNaN(b) ? "n/a" : String.format(Locale.ROOT, "%.0f %%", 100 * a / b);
    }

    private static double parseFirstMs(String rtt) {
        try {
            return Double.parseDouble(rtt.substring(0, rtt.indexOf(" ms")));
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    private double goMbps(URI url, String... args) throws Exception {
        String r = goBench(url, args);
        try {
            return Double.parseDouble(r.substring(0, r.indexOf(" MB/s")));
        } catch (RuntimeException e) {
            throw new IllegalStateException("Go bench failed: " + r, e);
        }
    }

    private void goRuns(MuxConfig config) throws Exception {
        if (noGo) {
            row("Go hashicorp/yamux peer (gorilla WebSocket)", "not run (--no-go)");
            return;
        }
        if (goUrl != null) {
            javaClientGoServer(config, goUrl, "Go yamux echo at " + goUrl);
            return;
        }
        GoPeer go;
        try {
            go = startGoServer();
        } catch (Exception | AssertionError e) {
            row("Go hashicorp/yamux peer (gorilla WebSocket)", "not run: " + firstLine(e));
            return;
        }
        try (GoPeer peer = go) {
            String addr = peer.awaitLine("LISTEN ", Duration.ofSeconds(30)).substring("LISTEN ".length()).trim();
            URI url = URI.create("ws://" + addr + "/mux?window=" + window);
            log("Go peer (server mode) at " + url);
            javaClientGoServer(config, url, "Go yamux server");
            goClientGoServer(url);
        }
    }

    /** The Go peer's bench client against our echo server on {@code library}. */
    private void goClientJavaServer(URI url, WebSocketLibrary library) throws Exception {
        long per64 = Math.max(1, totalBytes / 64);
        String server = "Java mux server (" + library.label() + ")";
        try {
            if (System.getProperty("basedir") == null) {
                System.setProperty("basedir", muxModuleDir().toString());
            }
            GoPeer.binary();
        } catch (Exception | AssertionError e) {
            row("Go yamux client -> " + server, "not run: " + e.getMessage().lines().findFirst().orElse(""));
            return;
        }
        log("Go client -> " + server);
        row("Go yamux client -> " + server + ", 1 stream x " + Sizes.format(totalBytes),
                goBench(url, "-streams", "1", "-bytes", Long.toString(totalBytes), "-warmup", "1"));
        row("Go yamux client -> " + server + ", 64 streams x " + Sizes.format(per64),
                goBench(url, "-streams", "64", "-bytes", Long.toString(per64), "-warmup", "1"));
    }

    private void javaClientGoServer(MuxConfig config, URI url, String server) throws Exception {
        long per64 = Math.max(1, totalBytes / 64);
        try (MuxBench bench = MuxBench.connect(url, config, TIMEOUT, libraries.get(0))) {
            log("Java client -> " + server + ": warm-up");
            bench.throughput(8, Math.max(1, totalBytes / 32), null);
            bench.latency(0, 200);
            row("Java mux client (" + libraries.get(0).label() + ") -> " + server + ", 1 stream x " + Sizes.format(totalBytes), mbs(bench.throughput(1, totalBytes, null)));
            row("Java mux client -> " + server + ", 64 streams x " + Sizes.format(per64), mbs(bench.throughput(64, per64, null)));
            MuxBenchResult.Latency l = bench.latency(warmup, rttSamples);
            row("Java mux client -> " + server + ", open + 1 B echo, p50 / p99", lat(l));
        }
        if (goRawUrl != null) {
            row("Java client -> Go WebSocket echo without mux, 1 socket x " + Sizes.format(totalBytes),
                    mbs(RawWebSocketBench.run(goRawUrl, totalBytes, 64 * 1024, TIMEOUT, libraries.get(0))));
        }
    }

    /** The Go peer's own bench client against the Go server: "Go yamux over gorilla WebSocket". */
    private void goClientGoServer(URI url) throws Exception {
        long per64 = Math.max(1, totalBytes / 64);
        log("Go client -> Go yamux server");
        String t1 = goBench(url, "-streams", "1", "-bytes", Long.toString(totalBytes), "-warmup", "1");
        row("Go yamux client -> Go yamux server, 1 stream x " + Sizes.format(totalBytes), t1);
        String t64 = goBench(url, "-streams", "64", "-bytes", Long.toString(per64), "-warmup", "1");
        row("Go yamux client -> Go yamux server, 64 streams x " + Sizes.format(per64), t64);
        String rtt = goBench(url, "-streams", "0", "-rtt", Integer.toString(rttSamples), "-warmup", Integer.toString(warmup));
        row("Go yamux client -> Go yamux server, open + 1 B echo, p50 / p99", rtt);
    }

    private String goBench(URI url, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(GoPeer.binary().toString(), "-mode", "bench", "-url", url.toString(),
                "-window", Integer.toString(window)));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            return "failed (" + String.join(" ", args) + ")";
        }
        for (String line : out.split("\n")) {
            if (line.startsWith("BENCH ")) {
                return String.format(Locale.ROOT, "%.1f MB/s", Double.parseDouble(field(line, "mbps")));
            }
            if (line.startsWith("RTT ")) {
                return String.format(Locale.ROOT, "%.3f ms / %.3f ms",
                        Double.parseDouble(field(line, "p50us")) / 1e3, Double.parseDouble(field(line, "p99us")) / 1e3);
            }
        }
        return "no result (" + out.trim() + ")";
    }

    private static String field(String line, String key) {
        for (String f : line.split(" ")) {
            if (f.startsWith(key + "=")) {
                return f.substring(key.length() + 1);
            }
        }
        throw new IllegalArgumentException("no " + key + " in " + line);
    }

    /** Builds (once) and starts the Go interop peer as an echo server. */
    private static GoPeer startGoServer() throws Exception {
        if (System.getProperty("basedir") == null) {
            System.setProperty("basedir", muxModuleDir().toString());
        }
        return GoPeer.server();
    }

    private static String firstLine(Throwable e) {
        return String.valueOf(e.getMessage()).lines().findFirst().orElse("");
    }

    /** mux/ from this class's location (mux/target/test-classes), for GoPeer's build. */
    private static Path muxModuleDir() throws URISyntaxException {
        Path classes = Paths.get(MuxBenchRunner.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        return classes.getParent().getParent();
    }

    private void printTable() throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        System.out.println();
        System.out.println("Loopback, " + cpus + " CPUs, " + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.version") + ", " + System.getProperty("os.name") + " "
                + System.getProperty("os.arch") + ", max heap " + Sizes.format(Runtime.getRuntime().maxMemory())
                + ", window " + Sizes.format(window) + ", host " + InetAddress.getLocalHost().getHostName());
        if (!headToHead.isEmpty()) {
            System.out.println();
            System.out.println("Head to head, medians of " + rounds + " interleaved rounds (each round's figure in brackets):");
            System.out.println();
            System.out.println("| measurement | Java mux (" + libraries.get(0).label() + ") in that role | Go yamux (gorilla), Go client -> Go server | Java relative |");
            System.out.println("|---|---:|---:|---:|");
            for (String[] r : headToHead) {
                System.out.println("| " + String.join(" | ", r) + " |");
            }
            System.out.println();
            System.out.println("Single runs:");
        }
        System.out.println();
        System.out.println("| measurement | result |");
        System.out.println("|---|---:|");
        for (String[] r : rows) {
            System.out.println("| " + r[0] + " | " + r[1] + " |");
        }
    }

    private void row(String what, String result) {
        rows.add(new String[] {what, result});
        log(what + ": " + result);
    }

    private static String mbs(MuxBenchResult.Throughput t) {
        return MuxBenchResult.mbs(t.mbPerSecond()) + " MB/s";
    }

    private static String lat(MuxBenchResult.Latency l) {
        return ms(l.p50Nanos()) + " / " + ms(l.p99Nanos());
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }

    private static void log(String s) {
        System.err.println("bench-mux: " + s);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** The echo server: in this JVM or a child JVM on the same classpath. */
    private static final class EchoPeer implements AutoCloseable {
        final URI mux;
        final URI raw;
        private final AutoCloseable stop;

        EchoPeer(URI mux, URI raw, AutoCloseable stop) {
            this.mux = mux;
            this.raw = raw;
            this.stop = stop;
        }

        static EchoPeer inProcess(MuxConfig config, WebSocketLibrary library) throws Exception {
            MuxEchoServer s = MuxEchoServer.start("127.0.0.1", 0, config, library);
            return new EchoPeer(s.uri(), s.rawUri(), s);
        }

        static EchoPeer childJvm(int window, WebSocketLibrary library) throws Exception {
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    MuxEchoServer.class.getName(), "--port", "0", "--window", Integer.toString(window),
                    "--library", library.label())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = r.readLine();
            if (line == null || !line.startsWith("listening ")) {
                p.destroyForcibly();
                throw new IllegalStateException("echo server child did not start: " + line);
            }
            URI mux = URI.create(line.substring("listening ".length()).trim());
            return new EchoPeer(mux, mux.resolve(MuxEchoServer.RAW_PATH), () -> {
                p.destroy();
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            });
        }

        @Override
        public void close() throws Exception {
            stop.close();
        }
    }
}
