package io.agentbox.manager.store;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code agentbox hub} in its own JVM (the test classpath, {@code AgentboxCommand} as main), on
 * loopback with ephemeral ports, so a test can {@code kill -9} it ({@link #kill()}) and start it
 * again on the same data directory and store.
 */
final class HubProcess implements AutoCloseable {
    private static final Pattern API = Pattern.compile("hub serving the API on port (\\d+), tunnels on port (\\d+)");
    private static final Pattern MANAGEMENT = Pattern.compile("management API on (\\d+)");
    private static final long START_TIMEOUT_S = 60;

    private final Process process;
    private final int apiPort;
    private final int tunnelPort;
    private final int managementPort;

    private HubProcess(Process process, int apiPort, int tunnelPort, int managementPort) {
        this.process = process;
        this.apiPort = apiPort;
        this.tunnelPort = tunnelPort;
        this.managementPort = managementPort;
    }

    /**
     * Starts a hub on {@code dataDir} (its output appended to {@code log}) and waits until it
     * prints its ports. {@code store} is the {@code --store-url}, or null for the embedded default.
     */
    static HubProcess start(Path dataDir, StoreConfig store, Path log) throws IOException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> cmd = new ArrayList<>(List.of(java,
                // a short-lived JVM: quick start matters more than peak speed
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), "io.agentbox.manager.cli.AgentboxCommand", "hub",
                "--data-dir", dataDir.toString(), "--host", "127.0.0.1", "--port", "0",
                "--tunnel-host", "127.0.0.1", "--tunnel-port", "0", "--management-port", "0"));
        if (store != null) {
            cmd.addAll(List.of("--store-url", store.url(), "--store-user", store.user()));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("AGENTBOX_STORE_URL");
        pb.environment().remove("AGENTBOX_STORE_PASSWORD");
        Process p = pb.start();
        CompletableFuture<int[]> ports = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(p, log, ports), "hub-output");
        pump.setDaemon(true);
        pump.start();
        try {
            int[] got = ports.get(START_TIMEOUT_S, TimeUnit.SECONDS);
            return new HubProcess(p, got[0], got[1], got[2]);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IllegalStateException("hub did not start within " + START_TIMEOUT_S + " s, see " + log, e);
        }
    }

    /** Copies the hub's output to {@code log} and completes {@code ports} with (api, tunnel, management). */
    private static void pump(Process p, Path log, CompletableFuture<int[]> ports) {
        int[] found = {-1, -1, -1};
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                Files.writeString(log, line + "\n", StandardCharsets.UTF_8,
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                Matcher m = MANAGEMENT.matcher(line);
                if (m.find()) {
                    found[2] = Integer.parseInt(m.group(1));
                }
                m = API.matcher(line);
                if (m.find()) {
                    found[0] = Integer.parseInt(m.group(1));
                    found[1] = Integer.parseInt(m.group(2));
                }
                if (found[0] > 0 && found[2] > 0) {
                    ports.complete(found.clone());
                }
            }
        } catch (IOException e) {
            ports.completeExceptionally(new UncheckedIOException(e));
        }
        ports.completeExceptionally(new IllegalStateException("hub exited with " + exitCode(p) + " before printing its ports"));
    }

    private static String exitCode(Process p) {
        try {
            return p.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(p.exitValue()) : "(still running)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    int apiPort() {
        return apiPort;
    }

    int tunnelPort() {
        return tunnelPort;
    }

    int managementPort() {
        return managementPort;
    }

    /** SIGKILL (what {@code kill -9} sends): no shutdown hook, no flush, no close. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("hub pid " + process.pid() + " survived SIGKILL for 30 s");
        }
    }

    /** SIGTERM: the hub's shutdown hook closes the store (and stops an embedded PostgreSQL). */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            kill();
            throw new IllegalStateException("hub pid " + process.pid() + " did not stop on SIGTERM within 60 s");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
