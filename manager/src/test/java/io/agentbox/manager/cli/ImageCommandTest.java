package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code agentbox image import|ls} against a real store in a temp data directory (as root). */
class ImageCommandTest {
    @TempDir
    Path tmp;
    Path dataDir;
    private StringWriter out;
    private StringWriter err;

    @BeforeEach
    void dirs() throws Exception {
        // searchable by others, or WorkerDirs would move the data dir under /tmp
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx--x--x"));
        dataDir = Files.createDirectory(tmp.resolve("worker"));
    }

    private int run(String... args) {
        out = new StringWriter();
        err = new StringWriter();
        CommandLine cli = new CommandLine(new AgentboxCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void importsThenLists() throws Exception {
        TestImages.Image multi = TestImages.multiLayer("cli/multi:1");
        Path save = tmp.resolve("save.tar");
        TestImages.writeDockerSave(save, multi);
        assertThat(run("image", "import", save.toString(), "--data-dir", dataDir.toString())).as(err.toString()).isZero();
        assertThat(out.toString()).contains("docker.io/cli/multi:1 sha256:");
        assertThat(err.toString()).contains("importing save.tar: 0/3 layers").contains("3/3 layers");
        assertThat(ImageStore.storeDir(dataDir).resolve("refs.json")).exists();

        Path layout = tmp.resolve("nameless.tar");
        TestImages.writeOciLayoutTar(layout, false, TestImages.zstd("ignored:1"));
        assertThat(run("image", "import", layout.toString(), "--data-dir", dataDir.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("import failed").contains("has no name").contains("--tag");
        assertThat(run("image", "import", layout.toString(), "--tag", "local/z:1", "--data-dir", dataDir.toString())).isZero();

        assertThat(run("image", "ls", "--data-dir", dataDir.toString())).isZero();
        assertThat(out.toString()).contains("REFERENCE").contains("docker.io/cli/multi:1").contains("docker.io/local/z:1");
        assertThat(run("image", "ls", "--data-dir", dataDir.toString(), "--output", "json")).isZero();
        JsonNode rows = new ObjectMapper().readTree(out.toString());
        assertThat(rows).hasSize(2);
        JsonNode row = rows.get(0).get("reference").asText().equals("docker.io/cli/multi:1") ? rows.get(0) : rows.get(1);
        assertThat(row.get("digest").asText()).startsWith("sha256:");
        assertThat(row.get("layers").asInt()).isEqualTo(3);
        assertThat(row.get("size").asLong()).isEqualTo(multi.layers().stream().mapToLong(l -> l.tar().length).sum());
        assertThat(row.get("created").asText()).isEqualTo("2024-05-01T12:00:00Z");
    }

    @Test
    void badInputIsAClearError() throws Exception {
        assertThat(run("image")).isEqualTo(2);
        assertThat(err.toString()).contains("missing command: pull, import or ls");
        assertThat(run("image", "import", tmp.resolve("nope.tar").toString(), "--data-dir", dataDir.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no such file or directory");
        Path junk = tmp.resolve("junk.tar");
        Files.writeString(junk, "junk".repeat(300));
        assertThat(run("image", "import", junk.toString(), "--data-dir", dataDir.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("import failed").contains(junk.toString());
        assertThat(run("image", "ls", "--output", "yaml", "--data-dir", dataDir.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--output must be table or json");
    }
}
