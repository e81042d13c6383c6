package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.store.StoreException;
import io.agentbox.manager.testing.ApiUnderTest;
import io.agentbox.protocol.SandboxTimeouts;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hub decides a sandbox's end time once and the real worker uses it as given: the
 * CreateSandbox and SetTimeout requests it sends (seen on the way into the worker) carry the end
 * time, and the worker's own report of the sandbox (GET /sandboxes/{id} asks it) and the hub's
 * record show exactly that instant. Hub and worker share one maximum.
 */
class EndTimeDecidedOnceTest {

    /** Notes every request message that reaches the worker's service. */
    private static final class Recorder implements ServerInterceptor {
        final List<Object> seen = new CopyOnWriteArrayList<>();

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                          ServerCallHandler<Q, A> next) {
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
                @Override
                public void onMessage(Q message) {
                    seen.add(message);
                    super.onMessage(message);
                }
            };
        }

        <T> T last(Class<T> type) {
            for (int i = seen.size() - 1; i >= 0; i--) {
                if (type.isInstance(seen.get(i))) {
                    return type.cast(seen.get(i));
                }
            }
            throw new AssertionError("no " + type.getSimpleName() + " reached the worker");
        }
    }

    private static long endAt(HttpResponse<String> r) throws Exception {
        JsonNode body = Json.MAPPER.readTree(r.body());
        return Instant.parse(body.get("endAt").asText()).toEpochMilli();
    }

    @Test
    void theWorkerRunsTheSandboxUntilTheEndTheHubDecided(@TempDir Path dir) throws Exception {
        try (ApiUnderTest api = ApiUnderTest.start(dir)) {
            Recorder recorder = new Recorder();
            api.interceptWorker(recorder);

            long before = System.currentTimeMillis();
            HttpResponse<String> created = api.call("POST", "/sandboxes", api.adminKey,
                    "{\"templateID\":\"base\",\"timeout\":120}");
            long after = System.currentTimeMillis();
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            String id = Json.MAPPER.readTree(created.body()).get("sandboxID").asText();

            CreateSandboxRequest sent = recorder.last(CreateSandboxRequest.class);
            assertThat(sent.getEndAtMs()).isBetween(before + 120_000, after + 120_000);
            assertThat(sent.getTimeoutSeconds()).as("for workers that predate end_at_ms").isEqualTo(120);
            assertThat(api.store.sandbox(id).orElseThrow().endAtMs()).as("the hub's record").isEqualTo(sent.getEndAtMs());
            HttpResponse<String> detail = api.call("GET", "/sandboxes/" + id, api.adminKey, null);
            assertThat(endAt(detail)).as("the worker's own end time").isEqualTo(sent.getEndAtMs());

            before = System.currentTimeMillis();
            assertThat(api.call("POST", "/sandboxes/" + id + "/timeout", api.adminKey, "{\"timeout\":600}").statusCode())
                    .isEqualTo(204);
            after = System.currentTimeMillis();
            SetTimeoutRequest extended = recorder.last(SetTimeoutRequest.class);
            assertThat(extended.getEndAtMs()).isBetween(before + 600_000, after + 600_000);
            assertThat(endAt(api.call("GET", "/sandboxes/" + id, api.adminKey, null))).isEqualTo(extended.getEndAtMs());

            // one maximum on both sides: the API refuses past it, and so does a template default
            HttpResponse<String> tooLong = api.call("POST", "/sandboxes", api.adminKey,
                    "{\"templateID\":\"base\",\"timeout\":" + (SandboxTimeouts.MAX_SECONDS + 1) + "}");
            assertThat(tooLong.statusCode()).isEqualTo(400);
            assertThat(tooLong.body()).contains("between 1 and " + SandboxTimeouts.MAX_SECONDS);
            var base = api.store.template("base").orElseThrow();
            assertThatThrownBy(() -> api.store.upsertTemplate(base.toBuilder()
                    .setDefaultTimeoutSeconds(SandboxTimeouts.MAX_SECONDS + 1).build()))
                    .isInstanceOf(StoreException.class).hasMessageContaining("defaultTimeoutSeconds");
            api.store.upsertTemplate(base.toBuilder().setDefaultTimeoutSeconds(SandboxTimeouts.MAX_SECONDS).build());
            before = System.currentTimeMillis();
            assertThat(api.call("POST", "/sandboxes", api.adminKey, "{\"templateID\":\"base\"}").statusCode()).isEqualTo(201);
            assertThat(recorder.last(CreateSandboxRequest.class).getEndAtMs() - before)
                    .isBetween(SandboxTimeouts.MAX_SECONDS * 1000L, SandboxTimeouts.MAX_SECONDS * 1000L + 10_000);
        }
    }
}
