package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One full benchmark run in a fixed order, each round starting from a refilled pool and a settled
 * worker: warm-up, claim rounds at the hub (an image template's, podman beside ours on that image,
 * snapshots, then the worker's local API), exec latency at the hub and the worker's API, burst (and
 * the turnover after it: its kills and the refill), sustained cycles, density.
 */
public final class BenchRun {
    private BenchRun() {}

    /** Runs what {@code o} asks for; progress lines go to {@code progress}. */
    public static BenchReport run(BenchOptions o, PrintStream progress) {
        ManagementClient management = o.managementUrl() == null ? null : new ManagementClient(o.managementUrl(), o.managerToken());
        BenchReport report = new BenchReport();
        SandboxBench hub = new SandboxBench(new E2bClient(o.apiUrl(), o.sandboxUrl(), o.apiKey()), o.template(),
                management, progress);
        int full = Math.max(o.claims(), o.burst());
        if (management != null) {
            int size = management.poolSize(o.template());
            if (size < full) {
                throw new BenchException("template '" + o.template() + "' keeps " + size + " warm sandboxes, but the rounds "
                        + "claim " + full + " at a time (max of --claims and --burst): raise its poolSize (and the worker's "
                        + "--max-sandboxes) or lower --claims/--burst");
            }
        } else {
            progress.printf("bench: WARNING: without --management-url the pool size cannot be checked and rounds cannot "
                    + "wait for refills (%d s pauses instead); claims beyond the warm sandboxes are cold starts%n",
                    SandboxBench.BLIND_REFILL.toSeconds());
        }
        progress.printf("bench: waiting for %d idle sandboxes of '%s'%n", full, o.template());
        hub.refill(full);

        if (o.warmup() > 0) {
            progress.printf("bench: warm-up: %d claims and runs%n", o.warmup());
            hub.claims(4, o.warmup());
            hub.exec(Math.min(o.warmup(), 50), 0);
            hub.refill(full);
        }
        Map<Integer, Latencies.Summary> base = claimRounds("hub", hub, o, full, report, progress);
        if (o.image() != null) {
            ImageRounds.run(o, management, full, base, report, progress);
        }
        if (o.podmanArchive() != null) {
            PodmanRounds.run(o, management, report, progress);
        }
        if (o.snapshots() > 0) {
            SnapshotRounds.run(o, management, full, base, report, progress);
        }
        SandboxBench worker = null;
        if (o.workerUrl() != null) {
            worker = new SandboxBench(new E2bClient(o.workerUrl(), o.workerUrl(), o.apiKey()), o.template(),
                    management, progress);
            worker.claims(4, Math.max(1, o.warmup()));
            worker.refill(full);
            claimRounds("worker API", worker, o, full, report, progress);
        }
        if (o.execRuns() > 0) {
            progress.printf("bench: commands.run('true') x %d in one sandbox%n", o.execRuns());
            Latencies.Summary atHub = hub.exec(o.execRuns(), 10);
            report.latency("exec `commands.run('true')` (bash -l -c)", "hub", atHub);
            if (worker != null) {
                // what the hub and the tunnel add to a command, beside what starting it costs
                progress.printf("bench: worker API: commands.run('true') x %d in one sandbox%n", o.execRuns());
                Latencies.Summary atWorker = worker.exec(o.execRuns(), 10);
                report.latency("exec `commands.run('true')` (bash -l -c)", "worker API", atWorker);
                report.add("exec p50, hub / worker API", "hub", atHub.p50Against(atWorker, null));
            }
        }
        if (o.burst() > 0) {
            hub.refill(full);
            progress.printf("bench: burst of %d claims at concurrency %d%n", o.burst(), o.burstConcurrency());
            long start = System.nanoTime();
            SandboxBench.Rate r = hub.claims(o.burstConcurrency(), o.burst());
            report.add("burst claims from a full pool of " + o.burst() + " (c=" + Math.min(o.burst(), o.burstConcurrency()) + ")", "hub",
                    r.perSecondText() + "; latency p50/p90/p99/max " + r.latency().ms() + " ms");
            if (hub.canWatchPools()) {
                progress.println("bench: timing the turnover after the burst (its kills and the pool's refill)");
                double s = hub.refill(o.burst(), start + r.wallNanos());
                report.add("pool turnover after the burst (" + o.burst() + " kills, " + o.burst() + " sandbox starts)", "worker",
                        String.format(Locale.ROOT, "%.1f s after the last claim: %.0f sandboxes replaced/s "
                                + "(up to 2 s late: capacity reports)", s, o.burst() / s));
            }
        }
        if (o.cycleSeconds() > 0) {
            hub.refill(full);
            progress.printf("bench: create -> run('true') -> kill for %d s at concurrency %d%n", o.cycleSeconds(),
                    o.cycleConcurrency());
            SandboxBench.Rate r = hub.cycles(o.cycleConcurrency(), Duration.ofSeconds(o.cycleSeconds()));
            report.add("sustained create -> run('true') -> kill (c=" + o.cycleConcurrency() + ", " + o.cycleSeconds() + " s)",
                    "hub", r.perSecondText() + "; cycle p50/p90/p99/max " + r.latency().ms() + " ms");
        }
        if (o.density() > 0) {
            // the "before" reading must not catch refills or the image template's sandboxes going away
            hub.refill(full);
            BenchException.pause(DensityBench.SETTLE);
            DensityBench.Result d = DensityBench.run(o.serverPid(), management, o.density(), o.image(), progress);
            report.add("memory per idle warm sandbox (" + d.sandboxes() + " idle"
                    + (o.image() == null ? "" : ", image " + o.image()) + ", network isolated)", "worker", d.row());
        }
        return report;
    }

    /** @return the latencies per concurrency level */
    static Map<Integer, Latencies.Summary> claimRounds(String where, SandboxBench bench, BenchOptions o, int full,
                                                       BenchReport report, PrintStream progress) {
        Map<Integer, Latencies.Summary> out = new TreeMap<>();
        for (int c : o.concurrency()) {
            progress.printf("bench: %s: %d claims at concurrency %d%n", where, o.claims(), c);
            Latencies.Summary s = bench.claims(c, o.claims()).latency();
            report.latency("warm claim (create -> 201), c=" + c, where, s);
            out.put(c, s);
            bench.refill(full);
        }
        return out;
    }
}
