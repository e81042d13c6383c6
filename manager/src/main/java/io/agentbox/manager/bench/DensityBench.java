package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;

/**
 * Memory per idle warm sandbox: the server's memory is read, a template with {@code sandboxes}
 * warm sandboxes is created through the management API, and once its pool is full the memory is
 * read again; the difference divided by {@code sandboxes} is the cost of one. The template is
 * deleted afterwards. Needs a server on this host ({@code pid}) and the management API. With an
 * {@code image} the template is of that image, otherwise of the host root; its network is the
 * default ({@code isolated}), so the figure includes each sandbox's network.
 */
final class DensityBench {
    static final Duration SETTLE = Duration.ofSeconds(2);

    /** Per idle sandbox, in bytes (heap: the worker's Java objects for it; rss/pss: its processes). */
    record Result(int sandboxes, double processesEach, double pssEach, double rssEach, double heapEach,
                  double serverRssEach) {
        String row() {
            return String.format(Locale.ROOT, "%.2f MiB (processes: PSS %.2f MiB, RSS %.2f MiB, %.1f processes; worker heap %.1f KiB; "
                            + "server RSS %.1f KiB)",
                    (pssEach + heapEach) / 1048576.0, pssEach / 1048576.0, rssEach / 1048576.0, processesEach,
                    heapEach / 1024.0, serverRssEach / 1024.0);
        }
    }

    private DensityBench() {}

    static Result run(long pid, ManagementClient management, int sandboxes, String image, PrintStream progress) {
        String name = "bench-density-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        ProcessMemory.Snapshot before = ProcessMemory.of(pid);
        progress.printf("bench: density: creating template %s with %d warm sandboxes%n", name, sandboxes);
        management.createTemplate("{\"name\":\"" + name + "\",\"poolSize\":" + sandboxes
                + (image == null ? "" : ",\"image\":\"" + image + "\"") + "}");
        try {
            management.await(name, sandboxes, Duration.ofMinutes(10), progress);
            BenchException.pause(SETTLE);
            ProcessMemory.Snapshot after = ProcessMemory.of(pid);
            double n = sandboxes;
            return new Result(sandboxes, (after.descendants() - before.descendants()) / n,
                    (after.descendantsPss() - before.descendantsPss()) / n,
                    (after.descendantsRss() - before.descendantsRss()) / n,
                    (after.heapUsed() - before.heapUsed()) / n, (after.serverRss() - before.serverRss()) / n);
        } finally {
            management.deleteTemplate(name);
        }
    }
}
