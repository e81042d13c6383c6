package io.agentbox.manager.cli;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.tools.MuxBench;
import io.agentbox.mux.tools.MuxBenchResult;
import io.agentbox.mux.tools.MuxEchoServer;
import io.agentbox.mux.tools.Sizes;
import io.agentbox.mux.tools.WebSocketLibrary;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code agentbox mux ...}: operator diagnostics for the yamux-over-WebSocket tunnel, like iperf. */
@Command(name = "mux", mixinStandardHelpOptions = true,
        description = "Diagnostics for the yamux-over-WebSocket tunnel, like iperf: run an echo-server at one end "
                + "and bench against it from the other.",
        subcommands = {MuxCommand.EchoServer.class, MuxCommand.Bench.class})
final class MuxCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command: echo-server or bench");
    }

    /** The smallest window yamux allows (and the default). */
    static final long MIN_WINDOW = 256 * 1024;

    static int window(CommandLine cli, long bytes) {
        if (bytes < MIN_WINDOW || bytes > Integer.MAX_VALUE) {
            throw new ParameterException(cli, "--window must be between 256k and 2g bytes, got " + bytes);
        }
        return (int) bytes;
    }

    /** The session settings both ends take: receive window and WebSocket library. */
    static final class SessionOptions {
        @Option(names = "--window", defaultValue = "256k", converter = SizeConverter.class,
                description = "Receive window per stream, e.g. 256k, 16m (default: ${DEFAULT-VALUE}, the yamux minimum).")
        long window;

        @Option(names = "--library", defaultValue = "netty", converter = LibraryConverter.class,
                description = "WebSocket implementation: netty or jetty (default: ${DEFAULT-VALUE}).")
        WebSocketLibrary library;

        MuxConfig config(CommandLine cli) {
            return MuxConfig.builder().initialStreamWindow(window(cli, window)).build();
        }
    }

    /** Accepts netty or jetty. */
    static final class LibraryConverter implements CommandLine.ITypeConverter<WebSocketLibrary> {
        @Override
        public WebSocketLibrary convert(String value) {
            try {
                return WebSocketLibrary.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Accepts 1048576, 64k, 16m, 1g. */
    static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return Sizes.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    @Command(name = "echo-server", mixinStandardHelpOptions = true,
            description = "Accept WebSocket connections at /mux, run a yamux server session on each and echo every "
                    + "stream the client opens (FIN after the client's FIN). Also echoes binary messages on a plain "
                    + "WebSocket at /echo. Runs until interrupted.")
    static final class EchoServer implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--port", required = true, description = "Port to listen on (0 picks a free one).")
        int port;

        @Option(names = "--host", defaultValue = "127.0.0.1",
                description = "Address to listen on (default: ${DEFAULT-VALUE}; 0.0.0.0 to accept remote benches).")
        String host;

        @CommandLine.Mixin
        SessionOptions session;

        @Override
        public Integer call() throws Exception {
            CommandLine cli = spec.commandLine();
            if (port < 0 || port > 65535) {
                throw new ParameterException(cli, "--port must be 0..65535, got " + port);
            }
            MuxConfig config = session.config(cli);
            PrintWriter out = cli.getOut();
            PrintWriter err = cli.getErr();
            MuxEchoServer server;
            try {
                server = MuxEchoServer.start(host, port, config, session.library);
            } catch (Exception e) {
                err.println("agentbox: cannot listen on " + host + ":" + port + ": " + rootMessage(e));
                err.flush();
                return 1;
            }
            out.println("agentbox: mux echo server on " + server.uri() + " (" + session.library.label() + ", window " + Sizes.format(session.window)
                    + "; plain WebSocket echo on " + server.rawUri() + "); Ctrl-C to stop");
            out.flush();
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.close();
                } catch (Exception ignored) {
                    // exiting anyway
                }
                out.println("agentbox: mux echo server stopped after " + server.sessionsAccepted() + " session(s), "
                        + server.streamsAccepted() + " stream(s), " + Sizes.format(server.bytesEchoed()) + " echoed");
                out.flush();
                stopped.countDown();
            }, "agentbox-shutdown"));
            stopped.await();
            return 0;
        }
    }

    @Command(name = "bench", mixinStandardHelpOptions = true,
            description = "Dial a mux echo server as the yamux client and measure echo throughput with N concurrent "
                    + "streams, then stream-open + 1-byte echo latency (p50/p99). Works against `agentbox mux "
                    + "echo-server` and any yamux echo peer speaking yamux over WebSocket binary messages.")
    static final class Bench implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--url", required = true, description = "Echo server, e.g. ws://host:9009/mux.")
        String url;

        @Option(names = "--streams", defaultValue = "1", description = "Concurrent streams (default: ${DEFAULT-VALUE}).")
        int streams;

        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
                description = "Bytes each stream sends and reads back, e.g. 1m, 256m (default: ${DEFAULT-VALUE}).")
        long bytes;

        @CommandLine.Mixin
        SessionOptions session;

        @Option(names = "--rtt-samples", defaultValue = "1000",
                description = "Open+1-byte echo samples after warm-up; 0 skips the latency run (default: ${DEFAULT-VALUE}).")
        int rttSamples;

        @Option(names = "--warmup", defaultValue = "100",
                description = "Unrecorded latency samples first (default: ${DEFAULT-VALUE}).")
        int warmup;

        @Option(names = "--timeout", defaultValue = "30",
                description = "Seconds to connect, to open a stream or get an echo, or without progress (default: ${DEFAULT-VALUE}).")
        int timeoutSeconds;

        @Override
        public Integer call() throws Exception {
            CommandLine cli = spec.commandLine();
            URI target = parseUrl(cli, url);
            if (streams < 1 || streams > 100_000) {
                throw new ParameterException(cli, "--streams must be 1..100000, got " + streams);
            }
            if (bytes < 1) {
                throw new ParameterException(cli, "--bytes must be at least 1, got " + bytes);
            }
            if (rttSamples < 0 || warmup < 0) {
                throw new ParameterException(cli, "--rtt-samples and --warmup must not be negative");
            }
            if (timeoutSeconds < 1) {
                throw new ParameterException(cli, "--timeout must be at least 1 second, got " + timeoutSeconds);
            }
            MuxConfig config = session.config(cli);
            PrintWriter out = cli.getOut();
            PrintWriter err = cli.getErr();
            try (MuxBench bench = MuxBench.connect(target, config, Duration.ofSeconds(timeoutSeconds), session.library)) {
                err.println("agentbox: connected to " + target + "; " + streams + " stream(s) x " + Sizes.format(bytes));
                err.flush();
                MuxBenchResult.Throughput t = bench.throughput(streams, bytes, (echoed, total, nanos) -> {
                    if (nanos >= 1_000_000_000L && echoed < total) {
                        err.printf(Locale.ROOT, "agentbox: %3d%%  %s of %s echoed, %.1f MB/s%n", echoed * 100 / total,
                                Sizes.format(echoed), Sizes.format(total), echoed / 1e6 / (nanos / 1e9));
                        err.flush();
                    }
                });
                out.println(t.describe());
                out.flush();
                MuxBenchResult.Latency l = null;
                if (rttSamples > 0) {
                    err.println("agentbox: latency: " + warmup + " warm-up + " + rttSamples + " samples");
                    err.flush();
                    l = bench.latency(warmup, rttSamples);
                    out.println(l.describe());
                }
                MuxBenchResult r = new MuxBenchResult(target, t, l);
                out.println();
                out.println(MuxBenchResult.tableHeader());
                out.println(r.tableRow(target.toString()));
                out.flush();
                return 0;
            } catch (IOException e) {
                err.println("agentbox: " + e.getMessage());
                err.flush();
                return 1;
            }
        }

        private static URI parseUrl(CommandLine cli, String url) {
            URI u;
            try {
                u = new URI(url);
            } catch (URISyntaxException e) {
                throw new ParameterException(cli, "--url is not a URL: " + url);
            }
            String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("ws") && !scheme.equals("wss")) {
                throw new ParameterException(cli, "--url must start with ws:// or wss://, got " + url);
            }
            if (u.getHost() == null) {
                throw new ParameterException(cli, "--url has no host: " + url);
            }
            return u;
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }
}
