"""Two sets of run.sh output directories side by side, per cell.

    python3 compare.py LABEL_A DIR [DIR ...] -- LABEL_B DIR [DIR ...]

For each cell (schedule, communication, competitor) found in both sets:
the bubble per stage of every run (the mean over stages and measured
iterations, as report.py's), their means and B's over A's, and the median
time of a tensor a stage waited for (report.waited_transfers) in each set.
For two builds of the runtime measured in alternate runs of one command.
"""

import statistics
import sys
from collections import defaultdict

from report import run_bubble_s, runs, waited_transfers


def read(dirs):
    """(schedule, comm, competitor) -> {"bubble_ms": [per run], "waited_s": [...]}"""
    cells = defaultdict(lambda: {"bubble_ms": [], "waited_s": []})
    for out in dirs:
        found = list(runs(out))
        if not found:
            raise ValueError(f"{out}: no run's *.rank0.json here (a run.sh output directory?)")
        for key, _run, _name, ranks in found:
            cells[key]["bubble_ms"].append(1000 * run_bubble_s(ranks))
            cells[key]["waited_s"] += waited_transfers(ranks)
    return cells


def main(argv):
    if "--" not in argv or argv.index("--") < 2 or len(argv) - argv.index("--") < 3:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    label_a, label_b = argv[0], argv[split + 1]
    try:
        a, b = read(argv[1:split]), read(argv[split + 2:])
    except ValueError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    rank = {"gpipe": 0, "1f1b": 1, "zb-h1": 2, "none": 0, "background": 1, "bulk": 2, "bulk-qos": 3}
    keys = sorted(set(a) & set(b), key=lambda k: (rank.get(k[2], 9), rank.get(k[0], 9), k[1]))
    print(f"| schedule | communication | competitor | bubble per run (ms): {label_a} "
          f"| {label_b} | mean {label_a} | mean {label_b} | {label_b} / {label_a} "
          f"| waited-for tensor (ms): {label_a} | {label_b} |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|")

    def median_ms(seconds):
        return f"{statistics.median(seconds) * 1000:.1f}" if seconds else "-"

    for key in keys:
        ca, cb = a[key], b[key]
        ma, mb = statistics.mean(ca["bubble_ms"]), statistics.mean(cb["bubble_ms"])
        print(f"| {key[0]} | {key[1]} | {key[2]} "
              f"| {' / '.join(f'{x:.0f}' for x in ca['bubble_ms'])} "
              f"| {' / '.join(f'{x:.0f}' for x in cb['bubble_ms'])} "
              f"| {ma:.0f} | {mb:.0f} | {mb / ma:.2f} "
              f"| {median_ms(ca['waited_s'])} | {median_ms(cb['waited_s'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
