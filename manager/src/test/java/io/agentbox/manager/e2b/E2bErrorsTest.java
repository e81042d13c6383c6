package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.http.ApiException;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** The one mapping of worker errors to E2B answers keeps the worker's host paths to itself. */
class E2bErrorsTest {
    @Test
    void internalFailuresDoNotNameHostPaths() {
        ApiException e = E2bErrors.fromWorker(Status.UNAVAILABLE.withDescription(
                "freeze of sandbox abc: cannot write /sys/fs/cgroup/freezer/agentbox/abc.1/freezer.state: No such file")
                .asRuntimeException(), "pause sandbox");
        assertThat(e.status()).isEqualTo(503);
        String message = e.body().get("message").asText();
        assertThat(message).doesNotContain("/sys/", "cgroup/").contains("pause sandbox", "freeze of sandbox abc",
                "<host path>", "No such file");

        ApiException client = E2bErrors.fromWorker(Status.INVALID_ARGUMENT.withDescription("path '/home/user/x' is bad")
                .asRuntimeException(), "create");
        assertThat(client.body().get("message").asText()).as("a 4xx keeps what the client named").contains("/home/user/x");
    }
}
