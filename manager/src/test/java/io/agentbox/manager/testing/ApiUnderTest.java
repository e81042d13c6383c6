package io.agentbox.manager.testing;

import io.agentbox.manager.api.ApiServer;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.builds.TemplateFiles;
import io.agentbox.manager.quota.TeamQuotas;
import java.util.Optional;
import io.agentbox.manager.store.HubStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;

/**
 * The hub's public API on an ephemeral loopback port, backed by one in-process worker cluster
 * "local" that runs real bubblewrap sandboxes.
 */
public final class ApiUnderTest implements AutoCloseable {
    public final HubStore store;
    public final InProcessRouter router;
    public final WorkerUnderTest worker;
    public final ApiServer server;
    /** The store's admin API key. */
    public final String adminKey;
    /** {@code http://127.0.0.1:<port>} */
    public final String base;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private ApiUnderTest(HubStore store, InProcessRouter router, WorkerUnderTest worker, ApiServer server, String adminKey) {
        this.store = store;
        this.router = router;
        this.worker = worker;
        this.server = server;
        this.adminKey = adminKey;
        this.base = "http://127.0.0.1:" + server.port();
    }

    /**
     * @param dir holds the hub store ({@code hub}) and the worker's data ({@code worker}); the
     *     {@code base} template runs on the host's network
     */
    public static ApiUnderTest start(Path dir) throws Exception {
        HubStore store = HubStore.open(dir.resolve("hub"));
        String key = store.ensureAdminKey().orElseThrow();
        // these tests were written for sandboxes on the host's network (base's default until issue 13)
        store.upsertTemplate(store.template("base").orElseThrow().toBuilder().setNetwork("host").build());
        WorkerUnderTest worker = WorkerUnderTest.start("local", dir.resolve("worker"), store.templates());
        InProcessRouter router = new InProcessRouter().add("local", worker.services());
        // template builds as on a hub; no capacity reports reach it (builds in these tests never get that far)
        TemplateBuilds builds = TemplateBuilds.open(store, dir.resolve("hub"), router, (cluster, template) -> Optional.empty(),
                TemplateFiles.DEFAULT_MAX_BYTES);
        ApiServer server = new ApiServer(store, router, "127.0.0.1", 0, Limits.DEFAULT, TeamQuotas.NONE, null, builds);
        server.start();
        return new ApiUnderTest(store, router, worker, server, key);
    }

    /** Reconnects the worker with {@code interceptor} in front of each of its services (what the hub sends in, what it answers). */
    public void interceptWorker(ServerInterceptor interceptor) throws java.io.IOException {
        router.disconnect("local");
        router.add("local", worker.services().stream()
                .map(s -> (BindableService) () -> ServerInterceptors.intercept(s, interceptor)).toList());
    }

    /** One JSON request over HTTP/1.1 with {@code X-API-Key: apiKey} (omitted when null); {@code body} null = none. */
    public HttpResponse<String> call(String method, String path, String apiKey, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (apiKey != null) {
            b.header("X-API-Key", apiKey);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception {
        server.close();
        router.close();
        worker.close();
        store.close();
    }
}
