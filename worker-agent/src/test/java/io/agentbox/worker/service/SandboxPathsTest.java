package io.agentbox.worker.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

class SandboxPathsTest {
    static final String HOME = SandboxUsers.home("user");

    @Test
    void resolvesRelativeAndTildeAgainstHome() {
        assertThat(SandboxPaths.resolve("a/b", HOME, false, "path")).isEqualTo("/home/user/a/b");
        assertThat(SandboxPaths.resolve("~", HOME, false, "path")).isEqualTo("/home/user");
        assertThat(SandboxPaths.resolve("~/x/../y", HOME, false, "path")).isEqualTo("/home/user/y");
        assertThat(SandboxPaths.resolve("/etc/../tmp/", HOME, false, "path")).isEqualTo("/tmp");
        assertThat(SandboxPaths.resolve("", HOME, true, "path")).isEqualTo("/home/user");
        assertThatThrownBy(() -> SandboxPaths.resolve("", HOME, false, "path")).isInstanceOf(StatusRuntimeException.class);
        assertThatThrownBy(() -> SandboxPaths.resolve("a\0b", HOME, false, "path")).isInstanceOf(StatusRuntimeException.class);
    }

    @Test
    void rootsPathsResolveAgainstSlashRoot() {
        String root = SandboxUsers.home(SandboxUsers.require("root"));
        assertThat(SandboxPaths.resolve("a/b", root, false, "path")).isEqualTo("/root/a/b");
        assertThat(SandboxPaths.resolve("~/x", root, false, "path")).isEqualTo("/root/x");
        assertThat(SandboxPaths.resolve("", root, true, "cwd")).isEqualTo("/root");
    }

    @Test
    void emptyMeansUserAndUnknownUsersAreUnauthenticatedNamingThem() {
        assertThat(SandboxUsers.require("")).isEqualTo("user");
        assertThat(SandboxUsers.require("root")).isEqualTo("root");
        assertThatThrownBy(() -> SandboxUsers.require("nobody-here"))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
                    assertThat(e.getStatus().getDescription()).startsWith("user 'nobody-here' does not exist in this sandbox");
                });
        // a name with a control and a bidi character is echoed escaped and cut
        assertThatThrownBy(() -> SandboxUsers.require("a\n\u202Eb" + "x".repeat(100)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
                        .startsWith("user 'a\\u000A\\u202Eb" + "x".repeat(60) + "...' does not exist"));
    }
}
