package io.agentbox.worker.runtime.net;

import io.agentbox.mux.util.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the host programs the bridge network drives: {@code ip} and {@code nsenter} (iproute2,
 * util-linux) and {@code nft} (nftables). Every run has a time limit and keeps at most
 * {@link #OUTPUT_LIMIT} bytes of each output stream.
 */
final class NetCommands {
    /** Largest stdout kept (the JSON of `ip -j route show table all` on a busy host stays far below). */
    static final int OUTPUT_LIMIT = 4 << 20;
    private static final int STDERR_LIMIT = 8 << 10;
    private static final long TIMEOUT_SECONDS = 20;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("net-command-watchdog"));

    final Path ip;
    final Path nft;
    final Path nsenter;

    private NetCommands(Path ip, Path nft, Path nsenter) {
        this.ip = ip;
        this.nft = nft;
        this.nsenter = nsenter;
    }

    /** @throws IllegalStateException naming every missing program and the Debian packages to install */
    static NetCommands locate() {
        Path ip = find("ip");
        Path nft = find("nft");
        Path nsenter = find("nsenter");
        List<String> missing = new ArrayList<>();
        if (ip == null) {
            missing.add("'ip' (package iproute2)");
        }
        if (nft == null) {
            missing.add("'nft' (package nftables)");
        }
        if (nsenter == null) {
            missing.add("'nsenter' (package util-linux)");
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("the isolated sandbox network needs " + String.join(", ", missing)
                    + ": apt-get install iproute2 nftables util-linux (deploy/bin/agentbox installs them when run as root)");
        }
        return new NetCommands(ip, nft, nsenter);
    }

    private static Path find(String program) {
        String path = System.getenv().getOrDefault("PATH", "");
        // sbin directories first: root's tools live there even when PATH lacks them
        for (String dir : ("/usr/sbin:/sbin:" + path + ":/usr/bin:/bin").split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** What a finished program printed. */
    record Result(int exitCode, String stdout, String stderr) {
        boolean ok() {
            return exitCode == 0;
        }

        /** stderr, else stdout, trimmed: the program's own explanation of a failure. */
        String message() {
            String text = stderr.isBlank() ? stdout : stderr;
            return text.strip().replace('\n', ';');
        }
    }

    /**
     * Runs {@code command} with {@code stdin} (may be empty) and waits for it.
     *
     * @throws IllegalStateException when it cannot start or runs past the time limit
     */
    static Result run(List<String> command, String stdin) {
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
        }
        // a hung program would block the reads below: the watchdog kills it, which ends them
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(process::destroyForcibly, TIMEOUT_SECONDS, TimeUnit.SECONDS);
        try {
            try (OutputStream in = process.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                // the program ended without reading everything; its exit code and stderr say why
            }
            // read in turn: these programs write a few hundred bytes of stderr at most, far below a pipe's buffer
            String out = drain(process.getInputStream(), OUTPUT_LIMIT);
            String err = drain(process.getErrorStream(), STDERR_LIMIT);
            int code = process.waitFor();
            if (watchdog.isDone()) {
                throw new IllegalStateException(command.get(0) + " did not finish within " + TIMEOUT_SECONDS + " s");
            }
            return new Result(code, out, err);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        } finally {
            watchdog.cancel(false);
        }
    }

    /** Reads a stream to its end, keeping the first {@code limit} bytes. */
    private static String drain(InputStream stream, int limit) {
        byte[] kept = new byte[0];
        try (stream) {
            kept = stream.readNBytes(limit);
            stream.transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
            // the stream closes when the process is killed; what was read is still useful
        }
        return new String(kept, StandardCharsets.UTF_8);
    }
}
