"""The tensors the stages waited for, per cell, from run.sh output directories.

    python3 tensors.py OUT_DIR [OUT_DIR ...]

For each cell (schedule, communication, competitor), over every run in every
directory given: how many tensors a stage waited for at least 1 ms, and the
mean, median, 90th percentile and largest time from the sender's isend to
the end of that wait, in ms (report.waited_transfers). The report's table
gives the median alone; a tail shows here.
"""

import glob
import json
import os
import statistics
import sys
from collections import defaultdict

from report import waited_transfers


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cells = defaultdict(list)
    for out in argv:
        paths = sorted(glob.glob(os.path.join(out, "*.rank0.json")))
        if not paths:
            print(f"tensors.py: {out}: no run's *.rank0.json here (a run.sh output directory?)",
                  file=sys.stderr)
            return 2
        for path in paths:
            name = os.path.basename(path)[: -len(".rank0.json")]
            schedule, comm, competition, _run = name.split(".")
            ranks = [json.load(open(p))
                     for p in sorted(glob.glob(os.path.join(out, name + ".rank*.json")))]
            cells[(schedule, comm, competition)] += waited_transfers(ranks)
    print("| schedule | communication | competitor | tensors | mean (ms) | median (ms) "
          "| 90th percentile (ms) | largest (ms) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for (schedule, comm, competition), seconds in cells.items():
        if not seconds:
            print(f"| {schedule} | {comm} | {competition} | 0 | - | - | - | - |")
            continue
        ms = sorted(s * 1000 for s in seconds)
        p90 = ms[int(0.9 * len(ms))] if len(ms) > 1 else ms[0]
        print(f"| {schedule} | {comm} | {competition} | {len(ms)} | {statistics.mean(ms):.1f} "
              f"| {statistics.median(ms):.1f} | {p90:.1f} | {ms[-1]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
