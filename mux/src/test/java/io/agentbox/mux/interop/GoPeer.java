package io.agentbox.mux.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The Go interop peer ({@code mux/src/test/go/yamuxpeer}): the real hashicorp/yamux over a gorilla
 * WebSocket. {@link #binary()} builds it once per test run into {@code mux/target/yamuxpeer/}, in
 * GOPATH mode and offline, from Debian's Go packages; if they are missing the build fails with a
 * message naming them. It never skips. A running peer is driven through stdin commands, each
 * answered by one {@code RESULT <conn> <command> ok|fail <details>} line (see main.go). Public for
 * {@code io.agentbox.mux.tools.MuxBenchRunner}, which benches against it (and runs its bench mode).
 */
public final class GoPeer implements AutoCloseable {

    static final String DEBIAN_PACKAGES = "golang-go golang-github-hashicorp-yamux-dev golang-github-gorilla-websocket-dev";
    private static final Path GOCODE = Paths.get("/usr/share/gocode/src/github.com");
    private static Path binary;

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer stderr = new StringBuffer();

    /** One command's answer. */
    record Result(String conn, String command, boolean ok, String details) {
    }

    private GoPeer(List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary().toString());
        cmd.addAll(args);
        process = new ProcessBuilder(cmd).start();
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        pump(process.getInputStream(), line -> lines.add(line), "stdout");
        pump(process.getErrorStream(), line -> stderr.append(line).append('\n'), "stderr");
    }

    /** Starts {@code yamuxpeer -mode server}; read the address with {@code awaitLine("LISTEN ", ...)}. */
    public static GoPeer server() throws Exception {
        return new GoPeer(List.of("-mode", "server", "-listen", "127.0.0.1:0", "-path", "/mux", "-stdin"));
    }

    /** Starts {@code yamuxpeer -mode client} against {@code url}; waits for the session ({@code CONN c}). */
    static GoPeer client(String url, int window) throws Exception {
        GoPeer p = new GoPeer(List.of("-mode", "client", "-url", url, "-window", Integer.toString(window), "-stdin"));
        p.awaitLine("CONN c ", Duration.ofSeconds(20));
        return p;
    }

    /** Waits for the next stdout line starting with {@code prefix}; earlier lines are dropped. */
    public String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("Go peer printed no '" + prefix + "' line within " + timeout
                        + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")") + "; stderr:\n" + stderr);
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** Runs one command on connection {@code conn} and returns its result (failed or not). */
    Result run(String conn, String command, Duration timeout) throws Exception {
        synchronized (stdin) {
            stdin.write(conn + " " + command + "\n");
            stdin.flush();
        }
        String name = command.split(" ")[0];
        String line = awaitLine("RESULT " + conn + " " + name + " ", timeout);
        String[] f = line.split(" ", 5);
        return new Result(f[1], f[2], f[3].equals("ok"), f.length > 4 ? f[4] : "");
    }

    /** Runs one command and fails the test unless the Go side reports success; returns the details. */
    String expectOk(String conn, String command, Duration timeout) throws Exception {
        Result r = run(conn, command, timeout);
        if (!r.ok()) {
            throw new AssertionError("Go peer: '" + command + "' failed: " + r.details() + "\nGo stderr:\n" + stderr);
        }
        return r.details();
    }

    public String stderr() {
        return stderr.toString();
    }

    @Override
    public void close() throws Exception {
        try {
            stdin.close(); // the peer exits at EOF on stdin
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    /** Path of the built peer; builds it on first use (once per JVM). */
    public static synchronized Path binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        Path module = Paths.get(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        Path src = module.resolve("src/test/go/yamuxpeer");
        if (!Files.isRegularFile(src.resolve("main.go"))) {
            throw new IllegalStateException("Go interop peer source not found at " + src + " (run the tests from the mux module)");
        }
        requireGo();
        Path work = module.resolve("target/yamuxpeer");
        Path out = work.resolve("yamuxpeer");
        Files.createDirectories(work.resolve("gopath"));
        Files.createDirectories(work.resolve("gocache"));
        ProcessBuilder pb = new ProcessBuilder("go", "build", "-o", out.toString(), ".")
                .directory(src.toFile())
                .redirectErrorStream(true);
        pb.environment().put("GO111MODULE", "off");
        pb.environment().remove("GOFLAGS");
        pb.environment().put("GOPATH", work.resolve("gopath") + ":/usr/share/gocode");
        pb.environment().put("GOCACHE", work.resolve("gocache").toString());
        pb.environment().put("GOPROXY", "off");
        long start = System.nanoTime();
        Process p = pb.start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                throw new IllegalStateException("building the Go yamux interop peer failed (GOPATH mode, Debian packages "
                        + DEBIAN_PACKAGES + "):\n" + log);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the Go peer", e);
        }
        System.out.printf("interop: built Go yamux peer %s in %d ms%n", out, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        binary = out;
        return out;
    }

    private static void requireGo() {
        String missing = "";
        try {
            Process v = new ProcessBuilder("go", "version").redirectErrorStream(true).start();
            v.getInputStream().readAllBytes();
            if (v.waitFor() != 0) {
                missing = "'go version' failed";
            }
        } catch (IOException | InterruptedException e) {
            missing = "no 'go' command on PATH";
        }
        if (!Files.isDirectory(GOCODE.resolve("hashicorp/yamux"))) {
            missing += (missing.isEmpty() ? "" : "; ") + "no " + GOCODE.resolve("hashicorp/yamux");
        }
        if (!Files.isDirectory(GOCODE.resolve("gorilla/websocket"))) {
            missing += (missing.isEmpty() ? "" : "; ") + "no " + GOCODE.resolve("gorilla/websocket");
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("The Go yamux interop tests need Go and Debian's Go sources (" + missing
                    + "). Install them with: apt-get install " + DEBIAN_PACKAGES
                    + " (deploy/bin/test-all does this). These tests are never skipped.");
        }
    }

    private static void pump(InputStream in, java.util.function.Consumer<String> sink, String name) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    sink.accept(line);
                }
            } catch (IOException e) {
                // the process is gone
            }
        }, "yamuxpeer-" + name);
        t.setDaemon(true);
        t.start();
    }
}
