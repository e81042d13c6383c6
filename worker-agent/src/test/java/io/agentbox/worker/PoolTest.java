package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.agentbox.protocol.v1.Template;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class PoolTest {

    private static PoolCapacity pool(WorkerFixture w, String name) {
        return w.host.capacity().stream().filter(p -> p.getTemplate().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void keepsNIdleClaimsFastRefillsAndNeverReusesKilledSandboxes() throws Exception {
        try (WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 4))) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> pool(w, "base").getIdle() == 4);
            assertThat(pool(w, "base").getRunning()).isZero();

            // the sandboxes already started and idle: a claim must hand out one of these
            Set<String> warm;
            try (var layers = java.nio.file.Files.list(w.dataDir.resolve("sandboxes"))) {
                warm = layers.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet());
            }
            assertThat(warm).hasSize(4);
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                SandboxInfo info = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                        .setTimeoutSeconds(120).putMetadata("k", "v" + i).setOwner("team-" + (i % 2)).build());
                ids.add(info.getSandboxId());
                assertThat(info.getClusterId()).isEqualTo(WorkerFixture.CLUSTER);
                assertThat(info.getMetadataMap()).containsEntry("k", "v" + i);
                assertThat(info.getEndAtMs() - info.getStartedAtMs()).isEqualTo(120_000);
            }
            // every claim came from the ready queue: no sandbox was started on the claim path
            assertThat(ids).hasSize(4).isSubsetOf(warm);
            assertThat(w.sandboxes.listSandboxes(ListSandboxesRequest.newBuilder().setOwner("team-1").build())
                    .getSandboxesCount()).isEqualTo(2);
            assertThat(pool(w, "base").getRunning()).isEqualTo(4);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> pool(w, "base").getIdle() == 4);

            Set<String> killed = new HashSet<>();
            for (String id : ids) {
                w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
                killed.add(id);
            }
            for (int i = 0; i < 8; i++) {
                String id = w.create();
                assertThat(killed).doesNotContain(id);
                assertThat(w.run(id, "echo alive").stdout()).isEqualTo("alive\n");
            }
        }
    }

    @Test
    void emptyPoolStartsOnClaimAndUnknownTemplateIsNotFound() throws Exception {
        try (WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 0))) {
            String id = w.create();
            assertThat(w.run(id, "echo $TEMPLATE_VAR").stdout()).isEqualTo("from-template\n");
            assertThatThrownBy(() -> w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("nope").build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        }
    }

    @Test
    void reaperKillsExpiredSandboxesAndSetTimeoutExtends() throws Exception {
        try (WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 1))) {
            String shortLived = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setTimeoutSeconds(1).build()).getSandboxId();
            String extended = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setTimeoutSeconds(1).build()).getSandboxId();
            SandboxInfo info = w.sandboxes.setTimeout(SetTimeoutRequest.newBuilder().setSandboxId(extended)
                    .setTimeoutSeconds(60).build());
            assertThat(info.getEndAtMs()).isGreaterThan(System.currentTimeMillis() + 50_000);
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThatThrownBy(() -> w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(shortLived).build()))
                            .isInstanceOf(StatusRuntimeException.class));
            // the reaper forgets the sandbox first, then kills it and deletes its layer
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(w.dataDir.resolve("sandboxes").resolve(shortLived)).doesNotExist());
            assertThat(w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(extended).build()).getSandboxId())
                    .isEqualTo(extended);
        }
    }

    @Test
    void applyTemplatesResizesAndDrainsAndCloseRemovesEverything() throws Exception {
        WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 2), WorkerFixture.template("other", 1));
        try {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                    pool(w, "base").getIdle() == 2 && pool(w, "other").getIdle() == 1);
            String claimed = w.create();
            w.host.applyTemplates(List.of(WorkerFixture.template("base", 1)));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                    w.host.capacity().size() == 1 && pool(w, "base").getIdle() == 1);
            // 1 idle + 1 claimed
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> count(w) == 2);
            w.host.applyTemplates(List.of(Template.newBuilder(WorkerFixture.template("base", 1)).setNetwork("none").build()));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> pool(w, "base").getIdle() == 1);
            String isolated = w.create(); // network none: loopback only
            String netDevs = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '";
            assertThat(w.run(isolated, netDevs).stdout().strip()).isEqualTo("lo");
            assertThat(w.run(claimed, netDevs).stdout().strip()).isNotEqualTo("lo");
            assertThat(w.run(claimed, "echo still").stdout()).isEqualTo("still\n");
        } finally {
            w.host.close();
            w.host.close();
            assertThat(count(w)).isZero();
            w.close();
        }
    }

    @Test
    void startCleansLeftoversOfAPreviousRun() throws Exception {
        try (WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 1))) {
            java.nio.file.Files.createDirectories(w.dataDir.resolve("sandboxes/stale-test/home"));
            try (SandboxHost again = SandboxHost.start("test", w.dataDir)) {
                assertThat(w.dataDir.resolve("sandboxes/stale-test")).doesNotExist();
                assertThat(count(w)).isZero();
            }
        }
    }

    private static long count(WorkerFixture w) throws Exception {
        try (var s = java.nio.file.Files.list(w.dataDir.resolve("sandboxes"))) {
            return s.count();
        }
    }
}
