package io.agentbox.worker.bench;

import io.agentbox.worker.image.LayerTar;
import io.agentbox.worker.image.unpack.LayerUnpacker;
import io.agentbox.worker.image.unpack.LowerLayers;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.image.unpack.UnpackResult;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Unpack throughput of {@link LayerUnpacker} (no JUnit, no thresholds): builds a layer of about
 * {@code --mb 200} MB uncompressed (files of 4 KiB to 1 MiB, half random bytes, half text, like a
 * language runtime's tree), compresses it with gzip and zstd, and unpacks each into a temp
 * directory (root needed: owners are set) the given number of times, printing MB/s of the
 * uncompressed tar and of the blob. Run with
 * {@code java -cp worker-agent/target/test-classes:worker-agent/target/classes:<deps> io.agentbox.worker.bench.UnpackBench --mb 200}.
 */
public final class UnpackBench {
    public static void main(String[] args) throws Exception {
        int mb = 200;
        int rounds = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--mb" -> mb = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--mb N, --rounds N)");
            }
        }
        System.out.print(run(mb, rounds));
    }

    /** The report table; {@code mb} uncompressed megabytes, each compression unpacked {@code rounds} times (best kept). */
    public static String run(int mb, int rounds) throws Exception {
        byte[] tar = layer(mb * 1_000_000L);
        byte[] gzip = LayerTar.gzip(tar);
        byte[] zstd = LayerTar.zstd(tar);
        Path work = Files.createTempDirectory("unpack-bench");
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "layer: %.1f MB tar, gzip %.1f MB, zstd %.1f MB%n", tar.length / 1e6, gzip.length / 1e6,
                zstd.length / 1e6));
        out.append(String.format(Locale.ROOT, "%-6s %10s %12s %12s %8s%n", "blob", "seconds", "tar MB/s", "blob MB/s", "entries"));
        try {
            LayerUnpacker unpacker = LayerUnpacker.forThisKernel();
            for (Map.Entry<String, byte[]> e : Map.of("gzip", gzip, "zstd", zstd).entrySet()) {
                double best = Double.MAX_VALUE;
                long entries = 0;
                for (int r = 0; r < rounds; r++) {
                    Path dir = Files.createDirectory(work.resolve(e.getKey() + r));
                    long t0 = System.nanoTime();
                    UnpackResult result = unpacker.unpack(new ByteArrayInputStream(e.getValue()), dir, LowerLayers.NONE);
                    best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                    entries = result.entries();
                    Trees.deleteRecursively(dir);
                }
                out.append(String.format(Locale.ROOT, "%-6s %10.2f %12.1f %12.1f %8d%n", e.getKey(), best, tar.length / 1e6 / best,
                        e.getValue().length / 1e6 / best, entries));
            }
        } finally {
            Trees.deleteRecursively(work);
        }
        return out.toString();
    }

    static byte[] layer(long bytes) {
        Random random = new Random(42);
        LayerTar t = new LayerTar();
        long written = 0;
        int dir = 0;
        int n = 0;
        byte[] text = ("def handler(event, context):\n    return {'status': 200, 'body': event}\n").repeat(20_000)
                .getBytes(StandardCharsets.UTF_8);
        while (written < bytes) {
            if (n % 50 == 0) {
                t.dir("usr/lib/d" + ++dir);
            }
            int size = 4096 << random.nextInt(9);
            byte[] content = new byte[size];
            if (n % 2 == 0) {
                random.nextBytes(content);
            } else {
                System.arraycopy(text, random.nextInt(text.length - size), content, 0, size);
            }
            t.file("usr/lib/d" + dir + "/f" + n, content, 0644, 0, 0, Map.of());
            written += size;
            n++;
        }
        return t.tar();
    }
}
