package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.testing.ApiUnderTest;
import io.agentbox.protocol.v1.ListSandboxesResponse;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A listing checks the hub's records against what the worker runs and ends the records of
 * sandboxes the worker no longer has. A sandbox created after the worker answered the listing is
 * missing from that answer although it runs: its record must stay. The interleaving is made
 * exact: the worker's listing answer is held until a create through the API has finished.
 */
class ListingDuringCreateTest {

    /** Runs {@code hook} once, when the worker has built its first listing answer and before it is sent. */
    private static final class CreateAfterListing implements ServerInterceptor {
        final AtomicReference<Runnable> hook = new AtomicReference<>();

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                          ServerCallHandler<Q, A> next) {
            return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendMessage(A message) {
                    if (message instanceof ListSandboxesResponse) {
                        Runnable h = hook.getAndSet(null);
                        if (h != null) {
                            h.run();
                        }
                    }
                    super.sendMessage(message);
                }
            }, headers);
        }
    }

    @Test
    void aSandboxCreatedWhileTheWorkerIsListedStaysRecordedAndReachable(@TempDir Path dir) throws Exception {
        try (ApiUnderTest api = ApiUnderTest.start(dir)) {
            CreateAfterListing interceptor = new CreateAfterListing();
            api.interceptWorker(interceptor);
            HttpResponse<String> first = api.call("POST", "/sandboxes", api.adminKey, "{\"templateID\":\"base\"}");
            assertThat(first.statusCode()).as(first.body()).isEqualTo(201);

            AtomicReference<HttpResponse<String>> late = new AtomicReference<>();
            interceptor.hook.set(() -> {
                try {
                    late.set(api.call("POST", "/sandboxes", api.adminKey, "{\"templateID\":\"base\"}"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            HttpResponse<String> list = api.call("GET", "/sandboxes", api.adminKey, null);
            assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
            assertThat(late.get()).as("the create ran inside the listing").isNotNull();
            assertThat(late.get().statusCode()).as(late.get().body()).isEqualTo(201);
            String id = Json.MAPPER.readTree(late.get().body()).get("sandboxID").asText();

            assertThat(api.store.sandbox(id).orElseThrow().ended()).as("its record after the listing").isFalse();
            HttpResponse<String> detail = api.call("GET", "/sandboxes/" + id, api.adminKey, null);
            assertThat(detail.statusCode()).as(detail.body()).isEqualTo(200);
            List<String> listed = new ArrayList<>();
            for (JsonNode s : Json.MAPPER.readTree(api.call("GET", "/sandboxes", api.adminKey, null).body())) {
                listed.add(s.get("sandboxID").asText());
            }
            assertThat(listed).contains(id, Json.MAPPER.readTree(first.body()).get("sandboxID").asText());
        }
    }
}
