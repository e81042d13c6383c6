package io.agentbox.worker.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host-tools test image runs its programs under chroot once unpacked (a dynamic bash and node). */
class HostToolsImageTest {
    @TempDir
    Path dir;

    @Test
    void programsOfTheImageRunInIt() throws Exception {
        TestImages.Image image = HostToolsImage.build("host-tools:test", List.of("bash", "cat", "node"));
        ImageStore store = ImageStore.open(dir);
        StoredImage stored = store.pull(ImageReference.parse(image.name()), TestImages.source(image), p -> {});
        Path root = stored.layers().get(0).dir().toRealPath();
        ProcessBuilder pb = new ProcessBuilder("chroot", root.toString(), "/bin/bash", "-c",
                "cat /etc/passwd; node -e 'console.log(1 + 1)'").redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/bin:/bin");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).isEqualTo("root:x:0:0:root:/root:/bin/bash\n2\n");
    }
}
