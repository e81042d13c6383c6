package io.agentbox.worker.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.metrics.WorkerMeters;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * What {@link SandboxPools} records into {@link WorkerMeters}: pool gauges, claim and start timers,
 * OOM kills read from the runtime before a kill, and snapshot templates folded into one label. The
 * sandboxes are plain objects (the subject is the bookkeeping); real sandboxes and a real OOM kill
 * are in the manager's MetricsDashboardTest.
 */
class PoolMetersTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** OOM kill counts the fake runtime reports, by sandbox id. */
    private final Map<String, AtomicLong> oom = new ConcurrentHashMap<>();

    private SandboxPools pools() {
        return new SandboxPools("c1", List.of(ObjectSandbox.runtime(id -> new ObjectSandbox(id) {
            @Override
            public long oomKills() {
                return oom.computeIfAbsent(id, k -> new AtomicLong()).get();
            }
        })), 8, io.agentbox.worker.image.TemplateImages.BUILT_IN_ONLY, new WorkerMeters(registry));
    }

    private double gauge(String name, String template) {
        return registry.get(name).tag("template", template).gauge().value();
    }

    @Test
    void poolsClaimsStartsAndOomKillsAreRecordedByTemplate() {
        try (SandboxPools pools = pools()) {
            pools.apply(List.of(Template.newBuilder().setName("t").setPoolSize(2).build()));
            await().atMost(Duration.ofSeconds(5)).until(() -> gauge(WorkerMeters.POOL_IDLE, "t") == 2);
            assertThat(gauge(WorkerMeters.POOL_TARGET, "t")).isEqualTo(2);
            assertThat(registry.get(WorkerMeters.START).tag("template", "t").timer().count()).isGreaterThanOrEqualTo(2);
            assertThat(registry.get(WorkerMeters.EXEC).tag("template", "t").counter().count())
                    .as("counters exist at 0 from the pool's start").isZero();

            String id = pools.claim(CreateSandboxRequest.newBuilder().setTemplate("t").build()).id();
            assertThat(registry.get(WorkerMeters.CLAIM).tags("template", "t", "result", "ok").timer().count()).isEqualTo(1);
            assertThat(gauge(WorkerMeters.POOL_RUNNING, "t")).isEqualTo(1);

            oom.computeIfAbsent(id, k -> new AtomicLong()).set(3); // three processes died at the memory limit; the kill reads the count first
            pools.kill(id);
            assertThat(registry.get(WorkerMeters.OOM_KILLS).tag("template", "t").counter().count()).isEqualTo(3);
            assertThat(gauge(WorkerMeters.POOL_RUNNING, "t")).isZero();

            assertThatThrownBy(() -> pools.claim(CreateSandboxRequest.newBuilder().setTemplate("nope").build()))
                    .isInstanceOf(StatusRuntimeException.class);
            assertThat(registry.find(WorkerMeters.CLAIM).tag("template", "nope").timer())
                    .as("a name nobody configured never becomes a label").isNull();
        }
    }

    @Test
    void everySnapshotTemplateSharesOneLabel() {
        try (SandboxPools pools = pools()) {
            pools.apply(List.of(Template.newBuilder().setName("acme/snap-1").setSnapshot("snap-1").setPoolSize(1).build(),
                    Template.newBuilder().setName("acme/snap-2").setSnapshot("snap-2").setPoolSize(1).build()));
            await().atMost(Duration.ofSeconds(5)).until(() -> gauge(WorkerMeters.POOL_IDLE, WorkerMeters.SNAPSHOT_LABEL) == 2);
            pools.claim(CreateSandboxRequest.newBuilder().setTemplate("acme/snap-2").build());
            assertThat(registry.get(WorkerMeters.CLAIM).tag("template", WorkerMeters.SNAPSHOT_LABEL).timer().count())
                    .isEqualTo(1);
            assertThat(registry.find(WorkerMeters.POOL_IDLE).tag("template", "acme/snap-1").gauge()).isNull();
        }
    }
}
