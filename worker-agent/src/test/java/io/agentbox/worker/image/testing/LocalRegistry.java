package io.agentbox.worker.image.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Debian's {@code docker-registry} (distribution 2.8, package {@code docker-registry}) as a child
 * process on 127.0.0.1 with filesystem storage in a temporary directory. Plain HTTP, no auth,
 * deletes enabled. {@link #close()} stops it and deletes its storage.
 */
public final class LocalRegistry implements AutoCloseable {
    public static final Path BINARY = Path.of("/usr/bin/docker-registry");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private final Path dir;
    private final Process process;
    private final int port;

    private LocalRegistry(Path dir, Process process, int port) {
        this.dir = dir;
        this.process = process;
        this.port = port;
    }

    /** Starts a registry and waits until {@code /v2/} answers 200. */
    public static LocalRegistry start() throws IOException, InterruptedException {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(BINARY + " is missing: install the Debian package docker-registry"
                    + " (apt-get install docker-registry)");
        }
        IOException last = null;
        for (int tries = 0; tries < 3; tries++) { // the free port may be taken between probe and bind
            Path dir = Files.createTempDirectory("agentbox-registry-");
            int port = freePort();
            Path config = dir.resolve("config.yml");
            Files.writeString(config, String.join("\n",
                    "version: 0.1",
                    "log:",
                    "  level: warn",
                    "  accesslog:",
                    "    disabled: true",
                    "storage:",
                    "  filesystem:",
                    "    rootdirectory: " + dir.resolve("data"),
                    "  delete:",
                    "    enabled: true",
                    "  maintenance:",
                    "    uploadpurging:",
                    "      enabled: false",
                    "http:",
                    "  addr: 127.0.0.1:" + port,
                    ""));
            Process p = new ProcessBuilder(BINARY.toString(), "serve", config.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("registry.log").toFile())
                    .start();
            LocalRegistry r = new LocalRegistry(dir, p, port);
            try {
                r.awaitReady();
                return r;
            } catch (IOException e) {
                last = e;
                r.close();
            }
        }
        throw last;
    }

    /** {@code 127.0.0.1:<port>}, as written in image references. */
    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public URI baseUri() {
        return URI.create("http://" + hostPort());
    }

    private void awaitReady() throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("docker-registry exited with " + process.exitValue() + ": " + log());
            }
            try {
                HttpResponse<Void> r = client.send(HttpRequest.newBuilder(baseUri().resolve("/v2/")).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(50);
        }
        throw new IOException("docker-registry did not answer /v2/ within " + START_TIMEOUT.toSeconds() + " s: " + log());
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("registry.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: the directory is under the temp dir
        }
    }
}
