package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.testing.ApiUnderTest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two clusters, one frozen (its tunnel looks open, nothing is heard from it, its calls never
 * answer): a create routed to it goes to the other cluster within a few seconds; with no other
 * cluster it is a clear 503 naming the silent one.
 */
class CreateFailoverTest {

    @Test
    void aCreateOnASilentClusterFailsOverWithinSecondsOrIsA503NamingIt(@TempDir Path dir) throws Exception {
        try (ApiUnderTest api = ApiUnderTest.start(dir)) {
            api.router.addSilent("a-frozen"); // picked first
            long start = System.nanoTime();
            HttpResponse<String> r = api.call("POST", "/sandboxes", api.adminKey, "{\"templateID\":\"base\"}");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.printf("create failover from a silent cluster: %d ms%n", ms);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
            assertThat(r.body()).contains("-local\"");
            assertThat(ms).as("create failover time in ms").isLessThan(8_000);

            api.router.disconnect("local");
            start = System.nanoTime();
            r = api.call("POST", "/sandboxes", api.adminKey, "{\"templateID\":\"base\"}");
            ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(r.body()).contains("a-frozen").contains("did not answer");
            assertThat(ms).isLessThan(8_000);
        }
    }
}
