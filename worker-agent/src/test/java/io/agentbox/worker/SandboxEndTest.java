package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

/**
 * The worker takes the end time the hub decided as given (only checked against the shared
 * maximum) instead of deciding again; callers without one still give seconds. Real sandboxes.
 */
class SandboxEndTest {

    private static void invalid(Runnable call, String messagePart) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains(messagePart);
        });
    }

    @Test
    void anEndTimeIsUsedAsGivenAndOneOutOfRangeIsRefused() throws Exception {
        try (WorkerFixture w = new WorkerFixture(WorkerFixture.template("base", 1))) {
            long end = System.currentTimeMillis() + 90_000 + 123;
            SandboxInfo info = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setEndAtMs(end).setTimeoutSeconds(5).setOwner("t").build());
            assertThat(info.getEndAtMs()).as("end_at_ms wins over timeout_seconds").isEqualTo(end);
            String id = info.getSandboxId();
            assertThat(w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(id).build()).getEndAtMs()).isEqualTo(end);

            long later = System.currentTimeMillis() + SandboxTimeouts.MAX_SECONDS * 1000L;
            assertThat(w.sandboxes.setTimeout(SetTimeoutRequest.newBuilder().setSandboxId(id).setEndAtMs(later).build())
                    .getEndAtMs()).isEqualTo(later);

            long now = System.currentTimeMillis();
            invalid(() -> w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setEndAtMs(now - 1).build()), "is not in the future");
            invalid(() -> w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setEndAtMs(now + (SandboxTimeouts.MAX_SECONDS + 120) * 1000L).build()), "s ahead");
            invalid(() -> w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base")
                    .setTimeoutSeconds(SandboxTimeouts.MAX_SECONDS + 1).build()), "between 1 and 86400 seconds");
            invalid(() -> w.sandboxes.setTimeout(SetTimeoutRequest.newBuilder().setSandboxId(id)
                    .setTimeoutSeconds(SandboxTimeouts.MAX_SECONDS + 1).build()), "between 1 and 86400 seconds");
            assertThat(w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(id).build()).getEndAtMs())
                    .as("a refused SetTimeout changes nothing").isEqualTo(later);
            assertThat(w.sandboxes.listSandboxes(io.agentbox.protocol.v1.ListSandboxesRequest.getDefaultInstance())
                    .getSandboxesCount()).as("refused creates claim nothing").isEqualTo(1);
        }
    }
}
