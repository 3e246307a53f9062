"""Markdown tables of afd-shallow sweeps and the like, for blind-budget.sh,
tail-loss.sh and afd-knobs.sh: per run (a sweep directory), the mean and 95%
confidence interval of one metric over its seeds (tools/evaluate's, not a
copy; the p99 TPOT unless --metric says otherwise) and the mean per run of
each count asked for.

  afd_shallow_table.py [--metric KEY:LABEL:SCALE] by-k|one COUNT,... DIR|NAME ...

by-k: a column group per ECN threshold (20, 65 and 100 KB); one: the sweep's
points together. COUNT: drops, timeouts, resent, or control (scheduling
packets per 100 data packets, which needs the sweep's
transport_stats.scheduling_packets and transport_stats.data_packets metrics).
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
RATIOS = {  # per 100 data packets
    "control": ("transport_stats.scheduling_packets", "transport_stats.data_packets"),
}
KS = ["20000", "65000", "100000"]


def cell(points, counts, metric):
    key, _, scale = metric
    value, ci = evaluate.mean_ci([float(p[key]) * scale for p in points])
    means = []
    for c in counts:
        if c in RATIOS:
            num, den = RATIOS[c]
            ratio = statistics.fmean(100 * float(p[num]) / max(1.0, float(p[den])) for p in points)
            means.append(f"{ratio:.2f}")
        else:
            means.append(f"{statistics.fmean(float(p[COUNTS[c]]) for p in points):,.0f}")
    # One seed has no interval: say so rather than print a zero-width one.
    spread = f" ± {ci:.3f}" if ci is not None else " (one seed)"
    return " | ".join([f"{value:.3f}{spread}"] + means)


class BadInput(Exception):
    pass


def parse(args):
    """metric, mode, counts, [(path, name)], or BadInput naming what is wrong."""
    metric = ("inference.tpot_p99_ms", "p99 TPOT (ms)", 1.0)
    if args and args[0] == "--metric":
        try:
            key, rest = args[1].split(":", 1)
            label, scale = rest.rsplit(":", 1)
            metric = (key, label, float(scale))
        except (IndexError, ValueError):
            raise BadInput("--metric: expected KEY:LABEL:SCALE (SCALE a number)")
        args = args[2:]
    if len(args) < 3:
        raise BadInput("expected by-k|one COUNT,... DIR|NAME ...")
    mode, counts, entries = args[0], args[1].split(","), args[2:]
    if mode not in ("by-k", "one"):
        raise BadInput(f"mode '{mode}': expected by-k or one")
    for c in counts:
        if c not in COUNTS and c not in RATIOS:
            raise BadInput(f"count '{c}': expected one of {', '.join([*COUNTS, *RATIOS])}")
    runs = []
    for entry in entries:
        if "|" not in entry:
            raise BadInput(f"'{entry}': expected DIR|NAME")
        runs.append(tuple(entry.split("|", 1)))
    return metric, mode, counts, runs


def read_points(path):
    try:
        with open(path + "/sweep.csv", newline="") as f:
            points = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}/sweep.csv: cannot read ({e})")
    if not points:
        raise BadInput(f"{path}/sweep.csv: no points")
    return points


def main(args):
    metric, mode, counts, runs = parse(args)
    # Every sweep read and every cell computed before the table starts: a bad
    # input prints no half table.
    rows = []
    for path, name in runs:
        points = read_points(path)
        try:
            if mode == "by-k":
                by_k = [[p for p in points if p["network.ecn_threshold_bytes"] == k] for k in KS]
                cells = [cell(k_points, counts, metric) for k_points in by_k]
            else:
                cells = [cell(points, counts, metric)]
        except KeyError as e:
            raise BadInput(f"{path}/sweep.csv: no column {e}")
        except (ValueError, statistics.StatisticsError) as e:
            raise BadInput(f"{path}/sweep.csv: {e}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    group = [metric[1]] + counts
    if mode == "by-k":
        head = " | ".join(f"K = {int(k) // 1000} KB | " + " | ".join(counts) for k in KS)
        print(f"| run | {head} |")
        print("|---|" + "---:|" * (len(group) * len(KS)))
    else:
        print("| run | " + " | ".join(group) + " |")
        print("|---|" + "---:|" * len(group))
    for row in rows:
        print(row)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BadInput as e:
        print(f"afd_shallow_table.py: {e}", file=sys.stderr)
        sys.exit(2)
