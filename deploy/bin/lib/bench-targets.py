#!/usr/bin/env python3
"""Prints the issue 17 targets table from the rows deploy/bin/bench collected.

Usage: bench-targets.py ROWS_FILE [MUX_TABLE_FILE]

ROWS_FILE holds the markdown rows `| measure | where | result |` of the run (agentbox bench, the
E2B SDK scripts); MUX_TABLE_FILE the head-to-head table of deploy/bin/bench-mux (optional). Each
target is matched to the row that measures it and its figure is read from that row: the p50 of a
`p50/p90/p99/max a / b / c / d ms` result, the `N/s` of a rate, the `X MiB` of a memory figure,
the `(R x)` ratio of a mux role row. A target whose row is not in this run (a --tiny run has no
c=16 round; --no-mux has no mux rows) says "not measured in this run" and counts as not met.
Exit status 0 always: the table reports, the run's own checks decide success.
"""
import re
import sys

P50 = re.compile(r"p50/p90/p99/max ([0-9.]+) /")
RATE = re.compile(r"([0-9.]+)/s")
MIB = re.compile(r"([0-9.]+) MiB")
RATIO = re.compile(r"\(([0-9.]+) x\)")


def rows(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3:
                out.append(cells)
    return out


def find(table, measure, where=None):
    for cells in table:
        if measure in cells[0] and (where is None or cells[1] == where):
            return cells
    return None


def figure(cells, pattern, column):
    if cells is None:
        return None
    m = pattern.search(cells[column])
    return float(m.group(1)) if m else None


def main():
    table = rows(sys.argv[1])
    mux = rows(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else []
    # (target text, value, unit, met?)
    checks = [
        ("hub warm claim p50 <= 1 ms at c=1", figure(find(table, "warm claim (create -> 201), c=1", "hub"), P50, 2), "ms",
         lambda v: v <= 1),
        ("hub warm claim p50 <= 5 ms at c=16", figure(find(table, "warm claim (create -> 201), c=16", "hub"), P50, 2), "ms",
         lambda v: v <= 5),
        (">= 5,000 burst claims/s", figure(find(table, "burst claims"), RATE, 2), "claims/s", lambda v: v >= 5000),
        ("time to first command p50 <= 10 ms (E2B JS SDK)", figure(find(table, "time to first command: `Sandbox.create()`"), P50, 2), "ms",
         lambda v: v <= 10),
        ("second command p50 <= 3 ms (E2B JS SDK)", figure(find(table, "in a running sandbox, E2B JS SDK"), P50, 2), "ms",
         lambda v: v <= 3),
        (">= 200 create -> run -> kill cycles/s", figure(find(table, "sustained create"), RATE, 2), "cycles/s",
         lambda v: v >= 200),
        ("idle memory per sandbox <= 2 MiB", figure(find(table, "memory per idle"), MIB, 2), "MiB", lambda v: v <= 2),
    ]
    for role in ("as server", "as client"):
        for streams in ("1 stream x", "64 streams x"):
            row = next((c for c in mux if c[0].startswith(role) and streams in c[0]), None)
            label = row[0] if row else role + ", " + streams.replace(" x", "")
            checks.append(("mux throughput >= 1.0 x Go yamux, " + label, figure(row, RATIO, len(row) - 1) if row else None,
                           "x Go", lambda v: v >= 1.0))
    print("| target (issue 17) | this run | met? |")
    print("|---|---|---|")
    for text, value, unit, ok in checks:
        if value is None:
            print("| %s | not measured in this run | no |" % text)
        else:
            print("| %s | %g %s | %s |" % (text, value, unit, "yes" if ok(value) else "no"))


if __name__ == "__main__":
    main()
