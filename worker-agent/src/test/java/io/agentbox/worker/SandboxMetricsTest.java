package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.PauseSandboxRequest;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.SandboxMetric;
import io.agentbox.protocol.v1.SandboxMetricsRequest;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.metrics.MetricsSampler;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Metrics of a real crun sandbox, sampled from its cgroup and its tmpfs writable layer: the first
 * sample within seconds of the claim, the template's limits as totals, CPU percentage rising under
 * a busy loop, memory after an allocation, disk after a write, and time ranges.
 */
class SandboxMetricsTest {
    private static final long MIB = 1024 * 1024;

    private static List<SandboxMetric> metrics(WorkerFixture w, String id, long startMs, long endMs) {
        return w.sandboxes.getSandboxMetrics(SandboxMetricsRequest.newBuilder().setSandboxId(id).setStartMs(startMs)
                .setEndMs(endMs).build()).getSamplesList();
    }

    private static void start(WorkerFixture w, String id, String script) {
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        w.processesAsync.exec(c).onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs(script))).build());
        c.started.orTimeout(10, TimeUnit.SECONDS).join();
    }

    @Test
    void samplesFollowCpuMemoryAndDiskAndAnswerTimeRanges() throws Exception {
        Template t = WorkerFixture.template("base", 1).toBuilder().setCpuCount(1).setMemoryMb(512).setDiskSizeMb(64).build();
        try (WorkerFixture w = new WorkerFixture(t)) {
            long created = System.currentTimeMillis();
            String id = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base").setOwner("t").build())
                    .getSandboxId();
            AtomicReference<SandboxMetric> first = new AtomicReference<>();
            Awaitility.await().atMost(Duration.ofMillis(MetricsSampler.FIRST_SAMPLE_MS + 3000)).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        List<SandboxMetric> m = metrics(w, id, 0, 0);
                        if (!m.isEmpty()) {
                            first.set(m.get(0));
                        }
                        return !m.isEmpty();
                    });
            SandboxMetric s0 = first.get();
            assertThat(s0.getTimestampMs()).isBetween(created, System.currentTimeMillis());
            assertThat(s0.getCpuCount()).isEqualTo(1);
            assertThat(s0.getMemTotal()).isEqualTo(512 * MIB);
            assertThat(s0.getMemUsed()).isBetween(1L, s0.getMemTotal());
            assertThat(s0.getDiskTotal()).isEqualTo(64 * MIB);
            assertThat(s0.getDiskUsed()).isBetween(0L, s0.getDiskTotal());
            assertThat(s0.getCpuUsedPct()).isBetween(0.0, 100.0);

            // a busy loop, 120 MiB of process memory, 20 MiB written to the writable layer
            start(w, id, "while :; do :; done");
            start(w, id, "exec python3 -c 'import time; a = bytearray(120 << 20); a[::4096] = b\"x\" * len(a[::4096]); time.sleep(3600)'");
            assertThat(w.run(id, "head -c 20971520 /dev/urandom > /home/user/big && sync && echo ok").stdout()).isEqualTo("ok\n");
            long loaded = System.currentTimeMillis();
            AtomicReference<SandboxMetric> busy = new AtomicReference<>();
            Awaitility.await().atMost(Duration.ofMillis(2 * MetricsSampler.PERIOD_MS + 2000)).pollInterval(Duration.ofMillis(250))
                    .untilAsserted(() -> {
                        List<SandboxMetric> m = metrics(w, id, loaded + 500, 0);
                        assertThat(m).isNotEmpty();
                        busy.set(m.get(m.size() - 1));
                    });
            SandboxMetric s1 = busy.get();
            // alone on the host a busy loop shows ~100 % of the one CPU; on a loaded CI host it gets a
            // share (25 % seen with 8 runnable tasks per core), still far from the idle sandbox's ~0
            assertThat(s1.getCpuUsedPct()).as("one busy loop on a 1-CPU sandbox").isGreaterThan(10.0).isLessThanOrEqualTo(100.0);
            assertThat(s1.getMemUsed() - s0.getMemUsed()).as("memUsed after allocating 120 MiB").isGreaterThan(100 * MIB);
            assertThat(s1.getMemUsed()).isLessThanOrEqualTo(s1.getMemTotal());
            assertThat(s1.getDiskUsed() - s0.getDiskUsed()).as("diskUsed after writing 20 MiB").isGreaterThanOrEqualTo(20 * MIB);
            assertThat(s1.getMemCache()).as("the tmpfs file is page cache of the sandbox").isGreaterThanOrEqualTo(20 * MIB);

            // ranges: one sample exactly, one before the sandbox existed, open ends
            assertThat(metrics(w, id, s1.getTimestampMs(), s1.getTimestampMs())).containsExactly(s1);
            assertThat(metrics(w, id, created - 3_600_000, created - 1)).isEmpty();
            List<SandboxMetric> all = metrics(w, id, 0, 0);
            assertThat(all).contains(s0, s1);
            for (int i = 1; i < all.size(); i++) {
                assertThat(all.get(i).getTimestampMs()).isGreaterThanOrEqualTo(all.get(i - 1).getTimestampMs());
            }

            // paused: still sampled, no CPU, the memory still held
            w.sandboxes.pauseSandbox(PauseSandboxRequest.newBuilder().setSandboxId(id).build());
            // the first sample after the pause still covers busy time before it: take one whose whole period was frozen
            long frozenFrom = System.currentTimeMillis() + MetricsSampler.PERIOD_MS + 100;
            Awaitility.await().atMost(Duration.ofMillis(2 * MetricsSampler.PERIOD_MS + 2000)).pollInterval(Duration.ofMillis(250))
                    .until(() -> !metrics(w, id, frozenFrom, 0).isEmpty());
            SandboxMetric s2 = metrics(w, id, frozenFrom, 0).get(0);
            assertThat(s2.getCpuUsedPct()).as("frozen: the busy loop stands still").isLessThan(2.0);
            assertThat(s2.getMemUsed()).as("frozen processes keep their memory").isGreaterThan(s0.getMemUsed() + 100 * MIB);

            w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            assertThatThrownBy(() -> metrics(w, id, 0, 0)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_NOT_FOUND);
            });
        }
    }
}
