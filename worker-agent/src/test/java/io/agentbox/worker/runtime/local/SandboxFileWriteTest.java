package io.agentbox.worker.runtime.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * File writes in a real local sandbox: a write that is abandoned part way (a cut-off upload, a
 * 413) leaves the old file whole and no temp file behind; a finished one replaces the file
 * keeping its mode and owner; a symlink is written through.
 */
class SandboxFileWriteTest {
    static Path dir;
    static LocalRuntime rt;
    static RuntimeSandbox sandbox;

    @BeforeAll
    static void up() throws Exception {
        dir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-files-");
        rt = new LocalRuntime(dir.resolve("a"));
        sandbox = rt.start("fw-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36),
                Template.newBuilder().setName("base").setNetwork("none").build());
    }

    @AfterAll
    static void down() throws Exception {
        if (rt != null) {
            rt.close();
        }
        Trees.deleteRecursively(dir);
    }

    static String sh(String user, String script) throws Exception {
        ContainerRuntimeTest.Out out = ContainerRuntimeTest.sh(sandbox, user, script);
        assertThat(out.code()).as(out.err()).isZero();
        return out.out();
    }

    static EntryInfo write(SandboxFiles files, String path, String content) {
        try (SandboxFiles.Write w = files.write(path)) {
            w.data().write(content.getBytes(StandardCharsets.UTF_8));
            return w.finish();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void anAbandonedWriteLeavesTheOldFileWholeAndNoTempBehind() throws Exception {
        SandboxFiles files = sandbox.files(LaunchSpec.USER);
        write(files, "/home/user/keep.txt", "old content\n");

        SandboxFiles.Write cut = files.write("/home/user/keep.txt");
        cut.data().write("new bytes that never finish".getBytes(StandardCharsets.UTF_8));
        cut.data().flush();
        // abandon it only once the bytes are on disk (in the file, or in a temp file beside it)
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!sh(LaunchSpec.USER, "cat /home/user/keep.txt /home/user/.keep.txt.* 2>/dev/null; true").contains("never finish")
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        cut.close(); // what a cut-off upload or a 413 does

        assertThat(sh(LaunchSpec.USER, "cat /home/user/keep.txt")).isEqualTo("old content\n");
        assertThat(sh(LaunchSpec.USER, "ls -A /home/user | grep -c agentbox || true").strip()).isEqualTo("0");

        SandboxFiles.Write fresh = files.write("/home/user/never.txt"); // abandoned before it existed
        fresh.data().write('x');
        fresh.close();
        assertThat(sh(LaunchSpec.USER, "[ -e /home/user/never.txt ] && echo there || echo absent").strip()).isEqualTo("absent");
    }

    @Test
    void aFinishedWriteReplacesTheFileKeepingItsModeAndOwner() throws Exception {
        write(sandbox.files(LaunchSpec.USER), "/home/user/mode.sh", "#!/bin/sh\necho one\n");
        sh(LaunchSpec.USER, "chmod 750 /home/user/mode.sh");
        EntryInfo info = write(sandbox.files(LaunchSpec.ROOT), "/home/user/mode.sh", "#!/bin/sh\necho two\n");
        assertThat(info.getSize()).isEqualTo(19);
        assertThat(info.getOwner()).as("root wrote a file of user's").isEqualTo("user");
        assertThat(sh(LaunchSpec.USER, "stat -c '%a %U' /home/user/mode.sh; /home/user/mode.sh")).isEqualTo("750 user\ntwo\n");
        assertThat(sh(LaunchSpec.USER, "ls -A /home/user | grep -c agentbox || true").strip()).isEqualTo("0");
    }

    @Test
    void aSymlinkIsWrittenThrough() throws Exception {
        sh(LaunchSpec.USER, "echo target > /home/user/real.txt && ln -sf real.txt /home/user/link.txt");
        write(sandbox.files(LaunchSpec.USER), "/home/user/link.txt", "through the link\n");
        assertThat(sh(LaunchSpec.USER, "[ -L /home/user/link.txt ] && cat /home/user/real.txt")).isEqualTo("through the link\n");
    }
}
