package io.agentbox.worker.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

class SandboxPathsTest {
    @Test
    void resolvesRelativeAndTildeAgainstHome() {
        assertThat(SandboxPaths.resolve("a/b", false, "path")).isEqualTo("/home/user/a/b");
        assertThat(SandboxPaths.resolve("~", false, "path")).isEqualTo("/home/user");
        assertThat(SandboxPaths.resolve("~/x/../y", false, "path")).isEqualTo("/home/user/y");
        assertThat(SandboxPaths.resolve("/etc/../tmp/", false, "path")).isEqualTo("/tmp");
        assertThat(SandboxPaths.resolve("", true, "path")).isEqualTo("/home/user");
        assertThatThrownBy(() -> SandboxPaths.resolve("", false, "path")).isInstanceOf(StatusRuntimeException.class);
        assertThatThrownBy(() -> SandboxPaths.resolve("a\0b", false, "path")).isInstanceOf(StatusRuntimeException.class);
    }
}
