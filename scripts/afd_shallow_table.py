"""Markdown tables of afd-shallow sweeps, for blind-budget.sh and tail-loss.sh:
per run (a sweep directory), the p99 TPOT's mean and 95% confidence interval
over its seeds (tools/evaluate's, not a copy) and the mean per run of each
count asked for.

  afd_shallow_table.py by-k|one COUNT,... DIR|NAME ...

by-k: a column group per ECN threshold (20, 65 and 100 KB); one: the sweep's
points together. COUNT: drops, timeouts or resent.
"""
import csv
import importlib.machinery
import statistics
import sys

sys.path.insert(0, "tools")  # tools/evaluate's modules sit beside it
evaluate = importlib.machinery.SourceFileLoader("evaluate", "tools/evaluate").load_module()

COUNTS = {
    "drops": "network.queue_drops",
    "timeouts": "transport_stats.timeouts",
    "resent": "transport_stats.retransmissions",
}
KS = ["20000", "65000", "100000"]


def cell(points, counts):
    tpot, ci = evaluate.mean_ci([float(p["inference.tpot_p99_ms"]) for p in points])
    means = [f"{statistics.fmean(float(p[COUNTS[c]]) for p in points):,.0f}" for c in counts]
    return " | ".join([f"{tpot:.3f} ± {ci or 0.0:.3f}"] + means)


def main(mode, counts, entries):
    counts = counts.split(",")
    group = ["p99 TPOT (ms)"] + counts
    if mode == "by-k":
        head = " | ".join(f"K = {int(k) // 1000} KB | " + " | ".join(counts) for k in KS)
        print(f"| run | {head} |")
        print("|---|" + "---:|" * (len(group) * len(KS)))
    else:
        print("| run | " + " | ".join(group) + " |")
        print("|---|" + "---:|" * len(group))
    for entry in entries:
        path, name = entry.split("|", 1)
        with open(path + "/sweep.csv") as f:
            points = list(csv.DictReader(f))
        if mode == "by-k":
            by_k = [[p for p in points if p["network.ecn_threshold_bytes"] == k] for k in KS]
            cells = [cell(k_points, counts) for k_points in by_k]
        else:
            cells = [cell(points, counts)]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
