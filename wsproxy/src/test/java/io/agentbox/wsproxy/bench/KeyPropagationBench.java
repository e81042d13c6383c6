package io.agentbox.wsproxy.bench;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.grpc.MuxAddress;
import io.agentbox.mux.grpc.MuxGrpc;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ApiKeyEvent;
import io.agentbox.protocol.v1.EventType;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.WatchRequest;
import io.agentbox.wsproxy.HubTunnels;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import io.agentbox.wsproxy.sync.HubWatches;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Key propagation from the hub to N simulated workers in one JVM (no JUnit; run with
 * {@code deploy/bin/bench-sync}): a real hub tunnel endpoint and sync service, N real tunnels
 * (Netty WebSocket + yamux + gRPC, one per simulated worker) each watching API keys. Each round
 * creates a key at the hub (then revokes it) and measures, per worker, the time until that
 * worker's watch delivered the event. Prints p50 / p99 / max over all workers and rounds, and
 * the median time until the last worker of a round had it.
 *
 * <p>Options: {@code --workers 100}, {@code --rounds 200}, {@code --warmup 20}.
 */
public final class KeyPropagationBench {

    private static final String TOKEN = "bench-token-bench-token";

    private int workers = 100;
    private int rounds = 200;
    private int warmup = 20;
    private volatile boolean finished;

    public static void main(String[] args) throws Exception {
        KeyPropagationBench b = new KeyPropagationBench();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--workers" -> b.workers = Integer.parseInt(args[++i]);
                case "--rounds" -> b.rounds = Integer.parseInt(args[++i]);
                case "--warmup" -> b.warmup = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + " (--workers N --rounds R --warmup W)");
                    System.exit(2);
                }
            }
        }
        Result r = b.run();
        System.out.println(r.table());
        System.exit(0);
    }

    /** Latencies in nanoseconds: every (worker, round) sample, and the slowest worker per round. */
    public record Result(int workers, int rounds, long[] createNanos, long[] revokeNanos, long[] lastWorkerNanos) {
        public String table() {
            return String.format(Locale.ROOT, """
                    | key propagation, %d workers x %d rounds (one JVM, loopback tunnels) | p50 | p99 | max |
                    |---|---:|---:|---:|
                    | key created at the hub -> applied by a worker | %s | %s | %s |
                    | key revoked at the hub -> applied by a worker | %s | %s | %s |
                    | key created -> applied by the last worker of the round | %s | %s | %s |""",
                    workers, rounds,
                    ms(pct(createNanos, 50)), ms(pct(createNanos, 99)), ms(pct(createNanos, 100)),
                    ms(pct(revokeNanos, 50)), ms(pct(revokeNanos, 99)), ms(pct(revokeNanos, 100)),
                    ms(pct(lastWorkerNanos, 50)), ms(pct(lastWorkerNanos, 99)), ms(pct(lastWorkerNanos, 100)));
        }
    }

    public static Result run(int workers, int rounds, int warmup) throws Exception {
        KeyPropagationBench b = new KeyPropagationBench();
        b.workers = workers;
        b.rounds = rounds;
        b.warmup = warmup;
        return b.run();
    }

    private Result run() throws Exception {
        if (workers < 1 || rounds < 1 || warmup < 0) {
            throw new IllegalArgumentException("--workers and --rounds must be positive, --warmup not negative");
        }
        HubWatches watches = HubWatches.empty();
        List<ManagedChannel> channels = new ArrayList<>();
        List<MuxSession> sessions = new ArrayList<>();
        // key hash -> arrival time per worker
        Map<String, long[]> arrivals = new ConcurrentHashMap<>();
        Map<String, CountDownLatch> pending = new ConcurrentHashMap<>();
        try (HubTunnels hub = new HubTunnels("127.0.0.1", 0, new SharedTokenAuthenticator(TOKEN), watches).start()) {
            URI uri = URI.create("ws://127.0.0.1:" + hub.address().getPort() + TunnelProtocol.PATH);
            MuxConfig config = MuxConfig.builder().initialStreamWindow(TunnelProtocol.STREAM_WINDOW_BYTES).build();
            log("connecting " + workers + " simulated workers to " + uri);
            CountDownLatch snapshots = new CountDownLatch(workers);
            for (int w = 0; w < workers; w++) {
                String cluster = "w" + w;
                DefaultHttpHeaders headers = new DefaultHttpHeaders();
                headers.set(TunnelProtocol.CLUSTER_ID_HEADER, cluster);
                headers.set(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + TOKEN);
                MuxSession s = NettyWebSocketClient.connect(uri, headers, MuxRole.CLIENT, config, null, Duration.ofSeconds(30))
                        .get(30, TimeUnit.SECONDS);
                sessions.add(s);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!hub.registry().isConnected(cluster)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(cluster + " did not register");
                    }
                    Thread.sleep(1);
                }
                ManagedChannel ch = MuxGrpc.channelBuilder(new MuxAddress("hub-of-" + cluster, () -> s)).build();
                channels.add(ch);
                int index = w;
                SyncServiceGrpc.newStub(ch).withWaitForReady().watchApiKeys(
                        WatchRequest.newBuilder().setClusterId(cluster).build(), new StreamObserver<>() {
                            @Override
                            public void onNext(ApiKeyEvent e) {
                                long now = System.nanoTime();
                                if (e.getType() == EventType.EVENT_TYPE_SNAPSHOT) {
                                    snapshots.countDown();
                                    return;
                                }
                                for (ApiKey k : e.getKeysList()) {
                                    String id = (e.getType() == EventType.EVENT_TYPE_DELETE ? "-" : "+") + k.getKeyHash();
                                    long[] times = arrivals.get(id);
                                    if (times != null) {
                                        times[index] = now;
                                        pending.get(id).countDown();
                                    }
                                }
                            }

                            @Override
                            public void onError(Throwable t) {
                                if (!finished) {
                                    log("worker " + index + " watch failed: " + t);
                                }
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
            }
            if (!snapshots.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("not every worker got its first snapshot");
            }
            log("all " + workers + " watching; " + warmup + " warm-up rounds, then " + rounds);
            long[] create = new long[rounds * workers];
            long[] revoke = new long[rounds * workers];
            long[] last = new long[rounds];
            for (int r = -warmup; r < rounds; r++) {
                String hash = String.format(Locale.ROOT, "%064x", r + warmup + 1);
                ApiKey key = ApiKey.newBuilder().setKeyHash(hash).setTeam("bench").setRole("user").build();
                long t0 = propagate(arrivals, pending, "+" + hash, () -> watches.apiKeys().upsert(key));
                long[] created = arrivals.remove("+" + hash);
                long t1 = propagate(arrivals, pending, "-" + hash, () -> watches.apiKeys().delete(hash));
                long[] revoked = arrivals.remove("-" + hash);
                if (r < 0) {
                    continue;
                }
                long slowest = 0;
                for (int w = 0; w < workers; w++) {
                    create[r * workers + w] = created[w] - t0;
                    revoke[r * workers + w] = revoked[w] - t1;
                    slowest = Math.max(slowest, created[w] - t0);
                }
                last[r] = slowest;
            }
            return new Result(workers, rounds, create, revoke, last);
        } finally {
            finished = true;
            channels.forEach(ManagedChannel::shutdownNow);
            sessions.forEach(MuxSession::close);
        }
    }

    /** Runs {@code change} and waits until every worker saw event {@code id}; returns the start time. */
    private long propagate(Map<String, long[]> arrivals, Map<String, CountDownLatch> pending, String id, Runnable change)
            throws InterruptedException {
        CountDownLatch all = new CountDownLatch(workers);
        arrivals.put(id, new long[workers]);
        pending.put(id, all);
        long t0 = System.nanoTime();
        change.run();
        if (!all.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(id + " reached only " + (workers - all.getCount()) + " of " + workers + " workers in 30 s");
        }
        pending.remove(id);
        return t0;
    }

    static long pct(long[] values, int p) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        if (p >= 100) {
            return sorted[sorted.length - 1];
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, i)];
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    private static void log(String s) {
        System.err.println("bench-sync: " + s);
    }
}
