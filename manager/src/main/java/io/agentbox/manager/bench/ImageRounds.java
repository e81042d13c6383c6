package io.agentbox.manager.bench;

import io.agentbox.manager.http.Json;
import java.io.PrintStream;
import java.util.Map;

/**
 * The claim rounds again on a temporary template of an image (same pool size, network and
 * concurrency levels as the main template), in the same run and client JVM, so the ratio of the
 * medians says what an image costs a claim. The template is deleted afterwards.
 */
final class ImageRounds {
    private ImageRounds() {}

    static void run(BenchOptions o, ManagementClient management, int full, Map<Integer, Latencies.Summary> base,
                    BenchReport report, PrintStream progress) {
        String name = "bench-image-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        progress.printf("bench: image template %s of %s with %d warm sandboxes%n", name, o.image(), full);
        // the main template's network, so the two differ only in their root file system
        management.createTemplate(templateJson(name, full, o.image(), management.network(o.template())));
        try {
            SandboxBench image = new SandboxBench(new E2bClient(o.apiUrl(), o.sandboxUrl(), o.apiKey()), name, management,
                    progress);
            image.refill(full);
            if (o.warmup() > 0) {
                image.claims(4, o.warmup());
                image.refill(full);
            }
            String where = "hub, image template";
            Map<Integer, Latencies.Summary> img = BenchRun.claimRounds(where, image, o, full, report, progress);
            for (Map.Entry<Integer, Latencies.Summary> e : img.entrySet()) {
                Latencies.Summary b = base.get(e.getKey());
                report.add("warm claim p50, image template / " + o.template() + ", c=" + e.getKey(), "hub",
                        e.getValue().p50Against(b, "image " + o.image()));
            }
        } finally {
            management.deleteTemplate(name);
        }
    }

    /** The {@code POST /internal/templates} body of a template of {@code image} keeping {@code poolSize} warm sandboxes. */
    static String templateJson(String name, int poolSize, String image, String network) {
        return "{\"name\":" + Json.MAPPER.valueToTree(name) + ",\"poolSize\":" + poolSize + ",\"image\":"
                + Json.MAPPER.valueToTree(image) + ",\"network\":" + Json.MAPPER.valueToTree(network) + "}";
    }
}
