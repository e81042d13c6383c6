package io.agentbox.manager.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The benchmark table: one markdown row per figure, printed at the end (stdout). */
public final class BenchReport {
    private final List<String[]> rows = new ArrayList<>();

    void add(String measure, String where, String value) {
        rows.add(new String[] {measure, where, value});
    }

    void latency(String measure, String where, Latencies.Summary s) {
        add(measure, where, "p50/p90/p99/max " + s.ms() + " ms (" + s.samples() + " samples)");
    }

    public void print(PrintStream out) {
        out.println("| measure | where | result |");
        out.println("|---|---|---|");
        for (String[] r : rows) {
            out.println("| " + r[0] + " | " + r[1] + " | " + r[2] + " |");
        }
    }
}
