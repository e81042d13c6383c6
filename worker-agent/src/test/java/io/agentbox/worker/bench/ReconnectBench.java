package io.agentbox.worker.bench;

import io.agentbox.mux.MuxConfig;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.tunnel.TunnelClient;
import io.agentbox.wsproxy.HubTunnels;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import io.agentbox.wsproxy.sync.HubWatches;
import java.net.ServerSocket;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * How fast a fleet of workers is back after its hub restarts (no JUnit; run with
 * {@code deploy/bin/bench-sync --reconnect}): N real {@link TunnelClient}s (the worker's dialer,
 * with its backoff) against a real hub tunnel endpoint; the hub goes away for a while (long
 * enough for every worker to reach its longest redial delay), comes back on the same port, and
 * each worker's time from the hub's return to its tunnel being registered is measured. Prints
 * p50 / p99 / max over all workers and rounds.
 *
 * <p>Options: {@code --workers 100}, {@code --rounds 3}, {@code --down-ms 5000}.
 */
public final class ReconnectBench {

    private static final String TOKEN = "bench-token-bench-token";

    public static void main(String[] args) throws Exception {
        int workers = 100;
        int rounds = 3;
        long downMs = 5000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--down-ms" -> downMs = Long.parseLong(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + " (--workers N --rounds R --down-ms MS)");
                    System.exit(2);
                }
            }
        }
        System.out.println(run(workers, rounds, downMs).table());
        System.exit(0);
    }

    /** @param reconnectNanos every worker's time from the hub's return to its registration, all rounds */
    public record Result(int workers, int rounds, long downMs, long[] reconnectNanos) {
        public String table() {
            long[] s = reconnectNanos.clone();
            Arrays.sort(s);
            return String.format(Locale.ROOT, """
                    | reconnect after a hub restart, %d workers x %d rounds (hub down %d ms each time) | p50 | p99 | max |
                    |---|---:|---:|---:|
                    | hub listening again -> worker's tunnel registered | %.0f ms | %.0f ms | %.0f ms |""",
                    workers, rounds, downMs, pct(s, 50) / 1e6, pct(s, 99) / 1e6, s[s.length - 1] / 1e6);
        }
    }

    static long pct(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    public static Result run(int workers, int rounds, long downMs) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        URI uri = URI.create("ws://127.0.0.1:" + port + TunnelProtocol.PATH);
        MuxConfig config = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
        List<TunnelClient> clients = new ArrayList<>();
        long[] samples = new long[workers * rounds];
        Map<String, Long> firstConnect = new ConcurrentHashMap<>();
        HubTunnels hub = start(port, firstConnect);
        try {
            for (int w = 0; w < workers; w++) {
                TunnelClient c = new TunnelClient(uri, "w" + w, TOKEN, config, null, session -> { });
                c.start();
                clients.add(c);
            }
            awaitAll(firstConnect, workers, 60);
            log(workers + " workers connected to " + uri);
            for (int r = 0; r < rounds; r++) {
                hub.close();
                log("round " + (r + 1) + ": hub down for " + downMs + " ms");
                Thread.sleep(downMs);
                Map<String, Long> connectedAt = new ConcurrentHashMap<>();
                long t0 = System.nanoTime();
                hub = start(port, connectedAt);
                awaitAll(connectedAt, workers, 60);
                for (int w = 0; w < workers; w++) {
                    samples[r * workers + w] = connectedAt.get("w" + w) - t0;
                }
            }
            return new Result(workers, rounds, downMs, samples);
        } finally {
            clients.forEach(TunnelClient::close);
            hub.close();
        }
    }

    private static HubTunnels start(int port, Map<String, Long> connectedAt) throws Exception {
        HubTunnels hub = new HubTunnels("127.0.0.1", port, new SharedTokenAuthenticator(TOKEN), HubWatches.empty());
        hub.registry().addConnectListener(id -> connectedAt.putIfAbsent(id, System.nanoTime()));
        return hub.start();
    }

    /** Waits until the hub's connect listener has seen every worker (it runs after registration). */
    private static void awaitAll(Map<String, Long> connectedAt, int workers, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (connectedAt.size() < workers) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + connectedAt.size() + " of " + workers
                        + " workers connected within " + seconds + " s");
            }
            Thread.sleep(5);
        }
    }

    private static void log(String s) {
        System.err.println("bench-reconnect: " + s);
    }
}
