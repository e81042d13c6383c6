package io.agentbox.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.worker.image.RegistrySettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --insecure-registry HOST:PORT} of {@code agentbox worker} and {@code agentbox standalone}. */
class RegistryOptionsTest {

    @Test
    void repeatedValuesBecomeTheWorkersRegistrySettings() {
        WorkerCommand worker = new WorkerCommand();
        new CommandLine(worker).parseArgs("--hub", "ws://h:9003/v1/tunnel", "--cluster-id", "c1", "--token-file", "t",
                "--insecure-registry", "127.0.0.1:5000", "--insecure-registry", "Registry.Local:8080",
                "--insecure-registry", "[::1]:5001");
        RegistrySettings settings = worker.registry.toSettings(worker);
        assertThat(settings.insecure()).isEqualTo(Set.of("127.0.0.1:5000", "registry.local:8080", "[::1]:5001"));
        assertThat(settings.isInsecure("REGISTRY.local:8080")).isTrue();
        assertThat(settings.isInsecure("registry.local:8081")).isFalse();
        assertThat(settings.isInsecure("docker.io")).isFalse();

        StandaloneCommand standalone = new StandaloneCommand();
        new CommandLine(standalone).parseArgs("--insecure-registry", "localhost:5000");
        assertThat(standalone.registry.toSettings(standalone).insecure()).containsExactly("localhost:5000");
        StandaloneCommand none = new StandaloneCommand();
        new CommandLine(none).parseArgs();
        assertThat(none.registry.toSettings(none)).isEqualTo(RegistrySettings.DEFAULT);
    }

    @Test
    void aValueThatIsNotHostColonPortStopsTheCommandBeforeAnythingStarts(@TempDir Path dir) throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "x");
        for (String[] bad : new String[][] {
                {"registry.local", "must be HOST:PORT"},
                {"registry.local:0", "port must be 1..65535, got '0'"},
                {"registry.local:http", "port must be 1..65535, got 'http'"},
                {"bad_host:5000", "invalid host 'bad_host'"},
                {"http://r:5000", "invalid host 'http://r'"}}) {
            String[] workerArgs = {"worker", "--hub", "ws://127.0.0.1:1/v1/tunnel", "--cluster-id", "c1",
                    "--token-file", token.toString(), "--data-dir", dir.toString(), "--insecure-registry", bad[0]};
            String[] standaloneArgs = {"standalone", "--data-dir", dir.toString(), "--insecure-registry", bad[0]};
            for (String[] args : new String[][] {workerArgs, standaloneArgs}) {
                // the commands report parameter errors on System.err (their CommandLine is made where they fail)
                java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
                java.io.PrintStream saved = System.err;
                int exit;
                System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
                try {
                    exit = new CommandLine(new AgentboxCommand()).execute(args);
                } finally {
                    System.setErr(saved);
                }
                assertThat(exit).as(args[0] + " " + bad[0]).isEqualTo(2);
                assertThat(err.toString(java.nio.charset.StandardCharsets.UTF_8)).as(args[0] + " " + bad[0])
                        .contains("--insecure-registry: registry '" + bad[0] + "'", bad[1]);
            }
        }
    }
}
