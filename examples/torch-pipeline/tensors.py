"""The tensors the stages waited for, per cell, from run.sh output directories.

    python3 tensors.py [--by-microbatch] OUT_DIR [OUT_DIR ...]

For each cell (schedule, communication, competitor), over every run in every
directory given: how many tensors a stage waited for at least 1 ms, and the
mean, median, 90th percentile and largest time from the sender's isend to
the end of that wait, in ms (report.waited_transfers). The report's table
gives the median alone; a tail shows here. With --by-microbatch: per cell,
the mean time from isend to received of every activation, micro-batch by
micro-batch (how the tensors of one iteration queue behind each other).
"""

import math
import statistics
import sys
from collections import defaultdict

from report import runs, waited_transfers


def activation_arrivals(ranks):
    """Micro-batch -> seconds from the sender's isend of its activation to the
    end of the receiver's wait for it, over every measured iteration."""
    by_mb = defaultdict(list)
    for r in ranks:
        if r["rank"] == 0:
            continue
        sender = next(s for s in ranks if s["rank"] == r["rank"] - 1)
        for i, iteration in enumerate(r["iterations"]):
            sent = {mb: t for kind, mb, t in sender["iterations"][i].get("sends", []) if kind == "F"}
            for kind, mb, _began, ended in iteration.get("waits", []):
                if kind == "F" and mb in sent:
                    by_mb[mb].append((ended - sent[mb]) / 1e9)
    return by_mb


def print_by_microbatch(cells):
    width = max((len(by_mb) for by_mb in cells.values()), default=0)
    print("| schedule | communication | competitor | "
          + " | ".join(f"mb {m}" for m in range(width)) + " |")
    print("|---|---|---|" + "---:|" * width)
    for (schedule, comm, competition), by_mb in cells.items():
        means = [f"{statistics.mean(by_mb[m]) * 1000:.1f}" if by_mb.get(m) else "-"
                 for m in range(width)]
        print(f"| {schedule} | {comm} | {competition} | " + " | ".join(means) + " |")


def main(argv):
    by_microbatch = bool(argv) and argv[0] == "--by-microbatch"
    if by_microbatch:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cells = defaultdict(lambda: defaultdict(list)) if by_microbatch else defaultdict(list)
    for out in argv:
        found = list(runs(out))
        if not found:
            print(f"tensors.py: {out}: no run's *.rank0.json here (a run.sh output directory?)",
                  file=sys.stderr)
            return 2
        for key, _run, _name, ranks in found:
            if by_microbatch:
                for mb, seconds in activation_arrivals(ranks).items():
                    cells[key][mb] += seconds
            else:
                cells[key] += waited_transfers(ranks)
    if by_microbatch:
        print_by_microbatch(cells)
        return 0
    print("| schedule | communication | competitor | tensors | mean (ms) | median (ms) "
          "| 90th percentile (ms) | largest (ms) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for (schedule, comm, competition), seconds in cells.items():
        if not seconds:
            print(f"| {schedule} | {comm} | {competition} | 0 | - | - | - | - |")
            continue
        ms = sorted(s * 1000 for s in seconds)
        p90 = ms[math.ceil(0.9 * len(ms)) - 1]  # nearest rank: 9 of 10 at or below it
        print(f"| {schedule} | {comm} | {competition} | {len(ms)} | {statistics.mean(ms):.1f} "
              f"| {statistics.median(ms):.1f} | {p90:.1f} | {ms[-1]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
