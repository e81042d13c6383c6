package io.agentbox.mux.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
    @Test
    void namedFactoryGivesEveryThreadTheSameNameAndMakesItDaemon() {
        ThreadFactory f = DaemonThreads.named("tls-reload");
        Thread a = f.newThread(() -> {});
        Thread b = f.newThread(() -> {});
        assertThat(a.getName()).isEqualTo("tls-reload");
        assertThat(b.getName()).isEqualTo("tls-reload");
        assertThat(a.isDaemon()).isTrue();
        assertThat(a.getState()).isEqualTo(Thread.State.NEW);
    }

    @Test
    void numberedFactoryCountsFromOnePerFactory() {
        ThreadFactory f = DaemonThreads.numbered("sandbox-io");
        assertThat(f.newThread(() -> {}).getName()).isEqualTo("sandbox-io-1");
        assertThat(f.newThread(() -> {}).getName()).isEqualTo("sandbox-io-2");
        assertThat(DaemonThreads.numbered("sandbox-io").newThread(() -> {}).getName()).isEqualTo("sandbox-io-1");
        assertThat(f.newThread(() -> {}).isDaemon()).isTrue();
    }

    @Test
    void startRunsTheTaskOnAStartedDaemonThread() throws Exception {
        CompletableFuture<String> ran = new CompletableFuture<>();
        Thread t = DaemonThreads.start("holder-output", () -> ran.complete(Thread.currentThread().getName()));
        assertThat(t.isDaemon()).isTrue();
        assertThat(ran.get(5, TimeUnit.SECONDS)).isEqualTo("holder-output");
        t.join(5_000);
        assertThat(t.isAlive()).isFalse();
    }
}
