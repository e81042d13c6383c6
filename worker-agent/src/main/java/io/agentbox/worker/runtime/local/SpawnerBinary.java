package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox init that starts commands on request ({@code src/main/c/spawner.c}, shipped in the
 * jar as source): compiled by the runtime once per source version with the host's C compiler
 * ({@code cc -static -Os}) into {@code <data>/spawner/<sha-256 prefix of the source>/spawner}, so
 * neither the build nor the jar carries a binary for one architecture. A sandbox runs it as PID 1
 * in place of catatonit (docs/local-runtime.md#spawner).
 *
 * <p>Whether it is used is the system property {@value #PROPERTY}: {@code auto} (default: used
 * when it compiles, else one WARN and sandboxes run catatonit and {@code crun exec} per command),
 * {@code required} (the runtime fails to start without it; the build's tests set this), {@code off}.
 */
final class SpawnerBinary {
    static final String PROPERTY = "agentbox.spawner";
    static final String SOURCE = "spawner.c";
    private static final long COMPILE_TIMEOUT_MS = 120_000;
    private static final Logger log = LoggerFactory.getLogger(SpawnerBinary.class);
    /** The last binary this JVM built or found: another runtime in it (tests) copies it instead of compiling. */
    private static volatile Path lastBuilt;

    private SpawnerBinary() {}

    enum Mode { AUTO, REQUIRED, OFF }

    static Mode mode() {
        String v = System.getProperty(PROPERTY, "auto").strip().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "auto", "" -> Mode.AUTO;
            case "required" -> Mode.REQUIRED;
            case "off" -> Mode.OFF;
            default -> throw new IllegalStateException("-D" + PROPERTY + "=" + v + ": use auto, required or off");
        };
    }

    /**
     * The compiled spawner for this runtime, compiling it first when this source version has no
     * binary under {@code dataDir} yet.
     *
     * @return empty when the mode is off, or auto and it cannot be built (logged once as WARN)
     * @throws IllegalStateException in mode required when it cannot be built, naming why
     */
    static Optional<Path> prepare(Path dataDir) {
        Mode mode = mode();
        if (mode == Mode.OFF) {
            log.info("-D{}=off: sandboxes start every command with crun exec", PROPERTY);
            return Optional.empty();
        }
        try {
            return Optional.of(build(dataDir));
        } catch (IOException | RuntimeException e) {
            if (mode == Mode.REQUIRED) {
                throw new IllegalStateException("the sandbox spawner is required (-D" + PROPERTY + "=required) but "
                        + "cannot be built: " + e.getMessage(), e);
            }
            log.warn("sandbox spawner unavailable ({}): every command starts with crun exec (~9 ms more per command); "
                    + "install gcc and libc6-dev for it", e.getMessage());
            return Optional.empty();
        }
    }

    private static Path build(Path dataDir) throws IOException {
        byte[] source;
        try (InputStream in = SpawnerBinary.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new IOException(SOURCE + " is missing from the worker's classpath");
            }
            source = in.readAllBytes();
        }
        Path dir = dataDir.resolve("spawner").resolve(hash(source));
        Path bin = dir.resolve("spawner");
        if (Files.isExecutable(bin)) {
            lastBuilt = bin;
            return bin;
        }
        Files.createDirectories(dir);
        Path known = lastBuilt;
        if (known != null && known.getParent().getFileName().equals(dir.getFileName()) && Files.isExecutable(known)) {
            Path copy = dir.resolve("spawner.tmp" + ProcessHandle.current().pid());
            Files.copy(known, copy, StandardCopyOption.REPLACE_EXISTING);
            Files.move(copy, bin, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return bin;
        }
        Path src = dir.resolve(SOURCE);
        Files.write(src, source);
        Path tmp = dir.resolve("spawner.tmp" + ProcessHandle.current().pid());
        String cc = compiler();
        List<String> cmd = List.of(cc, "-static", "-Os", "-s", "-o", tmp.toString(), src.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output;
        try {
            output = new String(p.getInputStream().readNBytes(8192), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(COMPILE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IOException(cc + " did not finish within " + COMPILE_TIMEOUT_MS + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while compiling " + SOURCE);
        }
        if (p.exitValue() != 0) {
            Files.deleteIfExists(tmp);
            throw new IOException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + output);
        }
        Files.move(tmp, bin, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        log.info("compiled the sandbox spawner into {}", bin);
        lastBuilt = bin;
        return bin;
    }

    /** The first of cc, gcc on PATH. */
    private static String compiler() throws IOException {
        String path = System.getenv().getOrDefault("PATH", "") + ":/usr/bin:/bin";
        for (String name : List.of("cc", "gcc")) {
            for (String dir : path.split(":")) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                    return Path.of(dir, name).toString();
                }
            }
        }
        throw new IOException("no C compiler (cc or gcc) on PATH");
    }

    private static String hash(byte[] source) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(source), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
