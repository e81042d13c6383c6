package io.agentbox.worker.bench;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.LayerTar;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.registry.RegistryClient;
import io.agentbox.worker.image.registry.RegistryConfig;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import io.agentbox.worker.image.unpack.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Pull + unpack throughput of an image from Debian's docker-registry on loopback (no JUnit, no
 * thresholds; run with {@code deploy/bin/bench-image}): builds an image of about {@code --mb 200}
 * MB uncompressed in 4 gzip layers (files of 4 KiB to 1 MiB, half random, half text), pushes it,
 * then per round pulls it into a fresh {@link ImageStore} with {@link RegistryClient} and, as the
 * baseline in the same run, copies it with {@code skopeo copy docker://… oci:…} and unpacks it with
 * {@code umoci unpack}. Prints the median seconds and MB/s (uncompressed image bytes per second) of
 * both and their ratio.
 *
 * <p>Options: {@code --mb 200}, {@code --rounds 3}. Needs root (owners are set) and the Debian
 * packages docker-registry, skopeo and umoci.
 */
public final class ImagePullBench {
    public static void main(String[] args) throws Exception {
        int mb = 200;
        int rounds = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--mb" -> mb = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("unknown option " + args[i] + " (--mb N, --rounds N)");
                    System.exit(2);
                }
            }
        }
        System.out.print(run(mb, rounds));
        System.exit(0);
    }

    /** The report rows (markdown table lines). */
    public static String run(int mb, int rounds) throws Exception {
        for (String tool : List.of("skopeo", "umoci")) {
            if (!Files.isExecutable(Path.of("/usr/bin", tool))) {
                throw new IllegalStateException(tool + " is missing: apt-get install " + tool);
            }
        }
        long[] parts = {mb * 400_000L, mb * 300_000L, mb * 200_000L, mb * 100_000L};
        List<byte[]> blobs = new ArrayList<>();
        List<String> diffIds = new ArrayList<>();
        long tarBytes = 0;
        for (long p : parts) {
            byte[] tar = UnpackBench.layer(p);
            tarBytes += tar.length;
            diffIds.add(LayerTar.sha256(tar));
            blobs.add(LayerTar.gzip(tar));
        }
        long blobBytes = blobs.stream().mapToLong(b -> b.length).sum();
        TestImages.Image shape = TestImages.image("bench/pull:v1",
                blobs.stream().map(b -> new TestImages.Layer(new byte[0], b, TestImages.LAYER_GZIP, LayerTar.sha256(b), "")).toList(),
                null, diffIds);
        Path work = Files.createTempDirectory("image-pull-bench");
        try (LocalRegistry registry = LocalRegistry.start();
             RegistryClient client = new RegistryClient(RegistryConfig.defaults().withInsecure(Set.of(registry.hostPort())))) {
            new RegistryPush(registry).push("bench/pull", "v1", blobs, shape.config(), ManifestKind.OCI);
            ImageReference ref = ImageReference.parse(registry.hostPort() + "/bench/pull:v1");
            double[] ours = new double[rounds];
            double[] baseline = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                Path storeDir = Files.createDirectory(work.resolve("ours" + r));
                long t0 = System.nanoTime();
                ImageStore.open(storeDir).pull(ref, client, p -> {});
                ours[r] = (System.nanoTime() - t0) / 1e9;
                Trees.deleteRecursively(storeDir);

                Path oci = work.resolve("oci" + r);
                Path bundle = work.resolve("bundle" + r);
                t0 = System.nanoTime();
                exec("skopeo", "copy", "--quiet", "--src-tls-verify=false", "docker://" + ref, "oci:" + oci + ":v1");
                exec("umoci", "unpack", "--image", oci + ":v1", bundle.toString());
                baseline[r] = (System.nanoTime() - t0) / 1e9;
                Trees.deleteRecursively(oci);
                Trees.deleteRecursively(bundle);
            }
            double o = median(ours);
            double b = median(baseline);
            StringBuilder out = new StringBuilder();
            String what = String.format(Locale.ROOT, "image pull + unpack (%.0f MB image, %.0f MB gzip, 4 layers, median of %d)",
                    tarBytes / 1e6, blobBytes / 1e6, rounds);
            out.append(String.format(Locale.ROOT, "| %s | agentbox (RegistryClient + ImageStore) | %.2f s, %.1f MB/s |%n", what, o,
                    tarBytes / 1e6 / o));
            out.append(String.format(Locale.ROOT, "| %s | skopeo copy + umoci unpack | %.2f s, %.1f MB/s |%n", what, b,
                    tarBytes / 1e6 / b));
            out.append(String.format(Locale.ROOT, "| image pull + unpack, agentbox vs skopeo + umoci | same run | %.2f x the speed |%n",
                    b / o));
            return out.toString();
        } finally {
            Trees.deleteRecursively(work);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static void exec(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + new String(out).strip());
        }
    }
}
